// ai.onnx.ml TreeEnsemble (opset 5) as dense tensor ops, so it runs on every target with the
// kernels the compiler already has. Semantics: ONNX-ML operator spec, TreeEnsemble-5 (interior
// nodes `nodes_*`, leaves `leaf_*`, roots `tree_roots`; a node's comparison mode LEQ, LT, GTE,
// GT, EQ, NEQ or set membership, `nodes_missing_value_tracks_true` sends NaN to the true
// branch; aggregate SUM, AVERAGE, MIN or MAX per target). post_transform is not applied, as in
// onnxruntime 1.32 and the ONNX reference implementation.
//
// Lowering, per tree t padded to K interior nodes and L leaf paths (all trees share K and L):
//   C[n, t, k] = 1 where sample n satisfies node k of tree t (every mode computed on the gathered
//                features, selected by constant masks; membership as a sum of equalities);
//   S[t, n, l] = C[t, n, :] @ D[t, :, l], D = +1 / -1 for the nodes a leaf's path takes true /
//                false: S equals the number of true-branch nodes on the path exactly when the
//                sample reaches the leaf (C is 0/1, so the sum is exact);
//   SUM:  Y = sum_t reached[t] @ W[t] (W[t, l, target of l] = weight of l); AVERAGE divides by
//         the tree count; MIN/MAX reduce, per target, the weights of reached leaves (a target
//         without a vote is 0, as in onnxruntime 1.32).
// The dense form needs trees * K * L elements: a larger ensemble is refused with a clear error.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

enum Mode : int64_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6 };
constexpr int64_t kMaxDenseElements = int64_t{1} << 26;
constexpr size_t kMaxDepth = 256;
// Node visits of all trees' walks together (a node reached by several paths is visited once per
// path): real ensembles need thousands; a shared-node graph could need 2^depth.
constexpr int64_t kMaxWalk = int64_t{1} << 20;

// The numbers of a tensor attribute (float, double or uint8), as doubles: decoded (and its
// size checked) by TensorProtoToConstant.
std::vector<double> TensorNumbers(ImportContext& ctx, const onnx::NodeProto& n,
                                  const std::string& name, bool required) {
  const onnx::AttributeProto* a = FindAttr(n, name);
  if (!a) {
    if (required) RELAX_THROW(ctx.Where(n) << "attribute '" << name << "' is required");
    return {};
  }
  if (!a->has_t()) RELAX_THROW(ctx.Where(n) << "attribute '" << name << "' must be a tensor");
  Expr e = TensorProtoToConstant(a->t(), ctx.Where(n) + "attribute '" + name + "'");
  const ConstantNode* c = As<ConstantNode>(e);
  const DataType dt = c->dtype;
  if (!(dt == DataType::Float(32) || dt == DataType::Float(64) || dt == DataType::UInt(8)))
    RELAX_THROW(ctx.Where(n) << "attribute '" << name
                             << "' must be a float, double or uint8 tensor");
  std::vector<double> out(static_cast<size_t>(c->numel()));
  const uint8_t* p = c->data->data();
  for (size_t i = 0; i < out.size(); ++i) {
    if (dt.bits == 64) {
      std::memcpy(&out[i], p + i * 8, 8);
    } else if (dt.bits == 32) {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      out[i] = f;
    } else {
      out[i] = p[i];
    }
  }
  return out;
}

// Bytes of `values` as `dt` (f32 or f64).
std::vector<uint8_t> FloatBytes(const std::vector<double>& values, DataType dt) {
  std::vector<uint8_t> bytes(values.size() * static_cast<size_t>(dt.bits / 8));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dt.bits == 64) {
      std::memcpy(&bytes[i * 8], &values[i], 8);
    } else {
      const float f = static_cast<float>(values[i]);
      std::memcpy(&bytes[i * 4], &f, 4);
    }
  }
  return bytes;
}

std::vector<uint8_t> IntBytes(const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<uint8_t> BoolBytes(const std::vector<bool>& values) {
  std::vector<uint8_t> bytes(values.size());
  for (size_t i = 0; i < values.size(); ++i) bytes[i] = values[i] ? 1 : 0;
  return bytes;
}

// One leaf as reached from a root: its leaf index and the (node, took-true) steps of its path.
struct LeafPath {
  int64_t leaf;
  std::vector<std::pair<int64_t, bool>> steps;
};

}  // namespace

std::vector<Value> ConvertTreeEnsemble(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  const DataType dt = x->sinfo->dtype;
  if (!(dt == DataType::Float(32) || dt == DataType::Float(64)))
    RELAX_THROW(ctx.Where(n) << "input X must be float or double, got " << ToString(dt));
  if (!x->sinfo->values || x->sinfo->values->size() != 2)
    RELAX_THROW(ctx.Where(n) << "input X must have rank 2 ([N, F])");
  const PrimExpr batch = (*x->sinfo->values)[0];
  int64_t features = -1;
  (*x->sinfo->values)[1].AsInt(&features);

  const auto feat = AttrInts(n, "nodes_featureids", {});
  const auto truen = AttrInts(n, "nodes_truenodeids", {});
  const auto falsen = AttrInts(n, "nodes_falsenodeids", {});
  const auto trueleaf = AttrInts(n, "nodes_trueleafs", {});
  const auto falseleaf = AttrInts(n, "nodes_falseleafs", {});
  const auto mtt = AttrInts(n, "nodes_missing_value_tracks_true", {});
  const auto leaf_target = AttrInts(n, "leaf_targetids", {});
  const auto roots = AttrInts(n, "tree_roots", {});
  const int64_t n_targets = AttrInt(n, "n_targets", -1);
  const int64_t aggregate = AttrInt(n, "aggregate_function", 1);
  const int64_t post = AttrInt(n, "post_transform", 0);
  const std::vector<double> splits = TensorNumbers(ctx, n, "nodes_splits", true);
  const std::vector<double> modes = TensorNumbers(ctx, n, "nodes_modes", true);
  const std::vector<double> weights = TensorNumbers(ctx, n, "leaf_weights", true);
  const std::vector<double> members = TensorNumbers(ctx, n, "membership_values", false);

  const size_t nk = feat.size(), nl = leaf_target.size();
  for (const auto* v : {&truen, &falsen, &trueleaf, &falseleaf})
    if (v->size() != nk)
      RELAX_THROW(ctx.Where(n) << "the nodes_* attributes must all have " << nk << " entries");
  if (splits.size() != nk || modes.size() != nk || (!mtt.empty() && mtt.size() != nk))
    RELAX_THROW(ctx.Where(n) << "the nodes_* attributes must all have " << nk << " entries");
  if (weights.size() != nl)
    RELAX_THROW(ctx.Where(n) << "leaf_weights has " << weights.size() << " entries, leaf_targetids "
                             << nl);
  if (n_targets < 1 || n_targets > (int64_t{1} << 20))
    RELAX_THROW(ctx.Where(n) << "n_targets must be in [1, 2^20], got " << n_targets);
  if (roots.empty()) RELAX_THROW(ctx.Where(n) << "tree_roots is empty");
  if (aggregate < 0 || aggregate > 3)
    RELAX_THROW(ctx.Where(n) << "aggregate_function " << aggregate << " is not one of 0..3");
  if (post < 0 || post > 4)
    RELAX_THROW(ctx.Where(n) << "post_transform " << post << " is not one of 0..4");
  for (int64_t t : leaf_target)
    if (t < 0 || t >= n_targets)
      RELAX_THROW(ctx.Where(n) << "leaf target id " << t << " is outside [0, " << n_targets << ")");
  // The membership sets, in node order, separated by NaN.
  std::map<int64_t, std::vector<double>> sets;
  size_t next_member = 0;
  for (size_t k = 0; k < nk; ++k) {
    const double m = modes[k];
    if (m != std::floor(m) || m < 0 || m > 6)
      RELAX_THROW(ctx.Where(n) << "nodes_modes[" << k << "] = " << m << " is not a mode (0..6)");
    if (feat[k] < 0 || (features >= 0 && feat[k] >= features))
      RELAX_THROW(ctx.Where(n) << "nodes_featureids[" << k << "] = " << feat[k]
                               << " is outside the " << features << " features");
    if (static_cast<int64_t>(m) != kMember) continue;
    std::vector<double>& set = sets[static_cast<int64_t>(k)];
    for (;;) {
      if (next_member >= members.size())
        RELAX_THROW(ctx.Where(n) << "membership_values has no (NaN-terminated) set for node " << k);
      const double v = members[next_member++];
      if (std::isnan(v)) break;
      set.push_back(v);
    }
  }

  // Every tree's leaf paths (iterative: a cycle or a depth over kMaxDepth is an error, and so
  // are more than kMaxWalk node visits in all: nodes shared by several paths multiply them).
  std::vector<std::vector<LeafPath>> trees;
  int64_t walked = 0;
  std::vector<std::vector<int64_t>> tree_nodes;
  for (int64_t root : roots) {
    if (root < 0 || static_cast<size_t>(root) >= nk)
      RELAX_THROW(ctx.Where(n) << "tree root " << root << " is outside the " << nk << " nodes");
    std::vector<LeafPath> paths;
    std::vector<int64_t> nodes;
    std::set<int64_t> seen;
    std::vector<std::pair<int64_t, std::vector<std::pair<int64_t, bool>>>> todo = {{root, {}}};
    while (!todo.empty()) {
      auto [node, steps] = std::move(todo.back());
      todo.pop_back();
      if (steps.size() > kMaxDepth)
        RELAX_THROW(ctx.Where(n) << "a tree is deeper than " << kMaxDepth << " (or has a cycle)");
      if (++walked > kMaxWalk)
        RELAX_THROW(ctx.Where(n) << "walking the trees takes more than 2^20 node visits (nodes "
                                    "reached by many paths)");
      if (seen.insert(node).second) nodes.push_back(node);
      for (bool dir : {true, false}) {
        const int64_t child = dir ? truen[node] : falsen[node];
        const bool leaf = (dir ? trueleaf[node] : falseleaf[node]) != 0;
        auto next = steps;
        next.push_back({node, dir});
        if (leaf) {
          if (child < 0 || static_cast<size_t>(child) >= nl)
            RELAX_THROW(ctx.Where(n) << "node " << node << " points to leaf " << child
                                     << ", outside the " << nl << " leaves");
          paths.push_back({child, std::move(next)});
        } else {
          if (child < 0 || static_cast<size_t>(child) >= nk)
            RELAX_THROW(ctx.Where(n) << "node " << node << " points to node " << child
                                     << ", outside the " << nk << " nodes");
          todo.push_back({child, std::move(next)});
        }
      }
    }
    trees.push_back(std::move(paths));
    tree_nodes.push_back(std::move(nodes));
  }
  const int64_t nt = static_cast<int64_t>(trees.size());
  int64_t kmax = 1, lmax = 1;
  for (int64_t t = 0; t < nt; ++t) {
    kmax = std::max<int64_t>(kmax, static_cast<int64_t>(tree_nodes[t].size()));
    lmax = std::max<int64_t>(lmax, static_cast<int64_t>(trees[t].size()));
  }
  if (nt * kmax > kMaxDenseElements / lmax || nt * lmax > kMaxDenseElements / n_targets)
    RELAX_THROW(ctx.Where(n) << "the ensemble is too large for the dense lowering (" << nt
                             << " trees x " << kmax << " nodes x " << lmax
                             << " leaves; at most 2^26 elements)");

  // Per (tree, node slot): the node's feature, split, mode masks, membership entries.
  auto& bb = ctx.bb();
  const int64_t slots = nt * kmax;
  std::vector<int64_t> slot_feature(slots, 0);
  std::vector<double> slot_split(slots, 0.0);
  std::vector<std::vector<bool>> mode_mask(7, std::vector<bool>(slots, false));
  std::vector<bool> nan_true(slots, false);
  std::vector<int64_t> member_feature, member_slot;
  std::vector<double> member_value;
  std::vector<double> d(static_cast<size_t>(nt * kmax * lmax), 0.0);
  std::vector<double> need(static_cast<size_t>(nt * lmax), static_cast<double>(kmax + 1));
  for (int64_t t = 0; t < nt; ++t) {
    std::map<int64_t, int64_t> slot_of;
    for (size_t i = 0; i < tree_nodes[t].size(); ++i) {
      const int64_t node = tree_nodes[t][i], s = t * kmax + static_cast<int64_t>(i);
      slot_of[node] = static_cast<int64_t>(i);
      slot_feature[s] = feat[node];
      slot_split[s] = splits[node];
      mode_mask[static_cast<int>(modes[node])][s] = true;
      nan_true[s] = !mtt.empty() && mtt[node] != 0;
      if (static_cast<int64_t>(modes[node]) == kMember)
        for (double v : sets[node]) {
          member_feature.push_back(feat[node]);
          member_slot.push_back(s);
          member_value.push_back(v);
        }
    }
    for (size_t l = 0; l < trees[t].size(); ++l) {
      double trues = 0;
      for (const auto& [node, dir] : trees[t][l].steps) {
        d[(t * kmax + slot_of[node]) * lmax + static_cast<int64_t>(l)] += dir ? 1.0 : -1.0;
        trues += dir ? 1.0 : 0.0;
      }
      need[t * lmax + static_cast<int64_t>(l)] = trues;
    }
  }

  // C: every present mode on the gathered features, selected by its mask.
  // Feature ids were checked against a static F; a symbolic F is checked at run time.
  const std::vector<PrimExpr> feature_extent = {(*x->sinfo->values)[1]};
  Expr feature_ids = MakeConstant(DataType::Int(64), {slots}, IntBytes(slot_feature));
  if (features < 0) CheckIndices(ctx, n, feature_ids, feature_extent, "nodes_featureids");
  Expr xf = bb.Emit(MakeCall(GetOp("relax.take"), {x, feature_ids}, {{"axis", int64_t{1}}}),
                    "tree_features");
  Expr split_c = MakeConstant(dt, {slots}, FloatBytes(slot_split, dt));
  static const char* kCmp[] = {"relax.less_equal", "relax.less",  "relax.greater_equal",
                               "relax.greater",    "relax.equal", "relax.equal"};
  Expr cond;
  auto or_in = [&](Expr mask_and) {
    cond = cond ? bb.Emit(MakeCall(GetOp("relax.logical_or"), {cond, mask_and}), "cond") : mask_and;
  };
  for (int m = 0; m <= 6; ++m) {
    if (std::none_of(mode_mask[m].begin(), mode_mask[m].end(), [](bool b) { return b; })) continue;
    Expr hit;
    if (m == kMember) {
      // Sum over the set's entries of (x == value): > 0 where the feature is in the set.
      const int64_t e = static_cast<int64_t>(member_value.size());
      Expr xm =
          bb.Emit(MakeCall(GetOp("relax.take"),
                           {x, MakeConstant(DataType::Int(64), {e}, IntBytes(member_feature))},
                           {{"axis", int64_t{1}}}),
                  "member_features");
      Expr eq = bb.Emit(
          MakeCall(GetOp("relax.equal"), {xm, MakeConstant(dt, {e}, FloatBytes(member_value, dt))}),
          "member_eq");
      std::vector<double> sel(static_cast<size_t>(e * slots), 0.0);
      for (int64_t i = 0; i < e; ++i) sel[i * slots + member_slot[i]] = 1.0;
      Expr eqf = bb.Emit(MakeCall(GetOp("relax.astype"), {eq}, {{"dtype", ToRuntimeString(dt)}}),
                         "member_eq_f");
      Expr count = bb.Emit(
          MakeCall(GetOp("relax.matmul"), {eqf, MakeConstant(dt, {e, slots}, FloatBytes(sel, dt))}),
          "member_count");
      hit = bb.Emit(MakeCall(GetOp("relax.greater"), {count, ScalarConst(dt, 0.5)}), "member_hit");
    } else {
      hit = bb.Emit(MakeCall(GetOp(kCmp[m]), {xf, split_c}), "split_hit");
      if (m == kNeq)  // not (x == split): true for a NaN x, as IEEE's !=
        hit = bb.Emit(MakeCall(GetOp("relax.logical_not"), {hit}), "split_ne");
    }
    or_in(bb.Emit(MakeCall(GetOp("relax.logical_and"),
                           {hit, MakeConstant(DataType::Bool(), {slots}, BoolBytes(mode_mask[m]))}),
                  "mode_hit"));
  }
  if (std::any_of(nan_true.begin(), nan_true.end(), [](bool b) { return b; })) {
    Expr nan = bb.Emit(MakeCall(GetOp("relax.isnan"), {xf}), "missing");
    or_in(bb.Emit(MakeCall(GetOp("relax.logical_and"),
                           {nan, MakeConstant(DataType::Bool(), {slots}, BoolBytes(nan_true))}),
                  "missing_true"));
  }
  // reached[t, n, l]: C (as 0/1, [t, n, k]) @ D[t] equals the path's true-branch count.
  Expr cf =
      bb.Emit(MakeCall(GetOp("relax.astype"), {cond}, {{"dtype", ToRuntimeString(dt)}}), "cond_f");
  cf = bb.Emit(MakeCall(GetOp("relax.reshape"), {cf, MakeShapeExpr({batch, nt, kmax})}), "cond_t");
  cf = bb.Emit(
      MakeCall(GetOp("relax.permute_dims"), {cf}, {{"axes", std::vector<int64_t>{1, 0, 2}}}),
      "cond_tree");
  Expr s = bb.Emit(
      MakeCall(GetOp("relax.matmul"), {cf, MakeConstant(dt, {nt, kmax, lmax}, FloatBytes(d, dt))}),
      "path_score");
  Expr reached = bb.Emit(
      MakeCall(GetOp("relax.equal"), {s, MakeConstant(dt, {nt, 1, lmax}, FloatBytes(need, dt))}),
      "reached");

  Expr y;
  if (aggregate <= 1) {  // AVERAGE, SUM
    std::vector<double> w(static_cast<size_t>(nt * lmax * n_targets), 0.0);
    for (int64_t t = 0; t < nt; ++t)
      for (size_t l = 0; l < trees[t].size(); ++l) {
        const int64_t leaf = trees[t][l].leaf;
        w[(t * lmax + static_cast<int64_t>(l)) * n_targets + leaf_target[leaf]] += weights[leaf];
      }
    Expr rf = bb.Emit(MakeCall(GetOp("relax.astype"), {reached}, {{"dtype", ToRuntimeString(dt)}}),
                      "reached_f");
    Expr per_tree =
        bb.Emit(MakeCall(GetOp("relax.matmul"),
                         {rf, MakeConstant(dt, {nt, lmax, n_targets}, FloatBytes(w, dt))}),
                "tree_values");
    y = bb.Emit(MakeCall(GetOp("relax.reduce"), {per_tree},
                         {{"kind", std::string("sum")},
                          {"axes", std::vector<int64_t>{0}},
                          {"keepdims", int64_t{0}}}),
                "tree_sum");
    if (aggregate == 0)
      y = bb.Emit(MakeCall(GetOp("relax.divide"), {y, ScalarConst(dt, static_cast<double>(nt))}),
                  "tree_average");
  } else {  // MIN, MAX: per target, over the weights of the reached leaves voting for it
    const bool is_min = aggregate == 2;
    const double extreme =
        dt.bits == 64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    const double init = is_min ? extreme : -extreme;
    std::vector<double> wl(static_cast<size_t>(nt * lmax), init);
    for (int64_t t = 0; t < nt; ++t)
      for (size_t l = 0; l < trees[t].size(); ++l)
        wl[t * lmax + static_cast<int64_t>(l)] = weights[trees[t][l].leaf];
    Expr v = bb.Emit(MakeCall(GetOp("relax.where"),
                              {reached, MakeConstant(dt, {nt, 1, lmax}, FloatBytes(wl, dt)),
                               ScalarConst(dt, init)}),
                     "leaf_values");
    v = bb.Emit(
        MakeCall(GetOp("relax.permute_dims"), {v}, {{"axes", std::vector<int64_t>{1, 0, 2}}}),
        "leaf_values_n");
    v = bb.Emit(MakeCall(GetOp("relax.reshape"), {v, MakeShapeExpr({batch, nt * lmax})}),
                "leaf_values_flat");
    std::vector<Expr> columns;
    for (int64_t target = 0; target < n_targets; ++target) {
      std::vector<int64_t> cols;
      for (int64_t t = 0; t < nt; ++t)
        for (size_t l = 0; l < trees[t].size(); ++l)
          if (leaf_target[trees[t][l].leaf] == target)
            cols.push_back(t * lmax + static_cast<int64_t>(l));
      if (cols.empty()) {  // no leaf votes for this target: "no vote" (0 below)
        columns.push_back(bb.Emit(
            MakeCall(GetOp("relax.full"), {ScalarConst(dt, init), MakeShapeExpr({batch, 1})}),
            "no_leaf"));
        continue;
      }
      Expr picked =
          bb.Emit(MakeCall(GetOp("relax.take"),
                           {v, MakeConstant(DataType::Int(64), {static_cast<int64_t>(cols.size())},
                                            IntBytes(cols))},
                           {{"axis", int64_t{1}}}),
                  "target_leaves");
      columns.push_back(bb.Emit(MakeCall(GetOp("relax.reduce"), {picked},
                                         {{"kind", std::string(is_min ? "min" : "max")},
                                          {"axes", std::vector<int64_t>{1}},
                                          {"keepdims", int64_t{1}}}),
                                "target_value"));
    }
    y = columns.size() == 1
            ? columns[0]
            : bb.Emit(MakeCall(GetOp("relax.concat"), columns, {{"axis", int64_t{1}}}), "targets");
    // A target no reached leaf votes for is 0 (onnxruntime 1.32; the ONNX reference leaves the
    // type's extreme there).
    Expr none = bb.Emit(MakeCall(GetOp("relax.equal"), {y, ScalarConst(dt, init)}), "no_vote");
    y = bb.Emit(MakeCall(GetOp("relax.where"), {none, ScalarConst(dt, 0.0), y}), "votes");
  }
  // post_transform is read but not applied: onnxruntime 1.32 and the ONNX reference
  // implementation both return the aggregated scores as they are for TreeEnsemble-5.
  return {ctx.Emit(MakeCall(GetOp("relax.identity"), {y}), n)};
}

}  // namespace relax::frontend::onnx_import
