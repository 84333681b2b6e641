// Tests of the VM builtins: shape programs (incl. floor division of negatives) and shape checks.
#include "relax/vm/builtins.h"

#include <gtest/gtest.h>

#include "../error_of.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

Value Call(const std::string& name, std::vector<Value> args) {
  const BuiltinFn* fn = LookupBuiltin(name);
  if (!fn) throw std::runtime_error("no builtin " + name);
  return (*fn)(args);
}

using relax::test::ErrorOf;

// One-dim program computing `a op b` from immediates.
std::vector<int64_t> BinProg(int64_t a, int64_t b, int64_t op) { return {1, 3, 0, a, 0, b, op, 0}; }

TEST(BuiltinsTest, MakeShapeArithmetic) {
  std::vector<int64_t> heap = {10, 3};
  // dim0 = heap[0] * 2 + heap[1]; dim1 = 7
  std::vector<int64_t> prog = {2, 5, 1, 0, 0, 2, 4, 0, 1, 1, 2, 0, 1, 0, 7};
  EXPECT_EQ(EvalShapeProgram(heap, prog, true), (std::vector<int64_t>{23, 7}));
  auto ev = [&](int64_t a, int64_t b, int64_t op) {
    return EvalShapeProgram(heap, BinProg(a, b, op), false)[0];
  };
  EXPECT_EQ(ev(7, 2, 5), 3);
  EXPECT_EQ(ev(-7, 2, 5), -4);
  EXPECT_EQ(ev(7, -2, 5), -4);
  EXPECT_EQ(ev(-7, -2, 5), 3);
  EXPECT_EQ(ev(-6, 2, 5), -3);
  EXPECT_EQ(ev(7, 3, 6), 1);
  EXPECT_EQ(ev(-7, 3, 6), 2);
  EXPECT_EQ(ev(7, -3, 6), -2);
  EXPECT_EQ(ev(-7, -3, 6), -1);
  EXPECT_EQ(ev(-6, 3, 6), 0);
  EXPECT_EQ(ev(9, 4, 3), 5);
  EXPECT_EQ(ev(9, 4, 7), 4);
  EXPECT_EQ(ev(9, 4, 8), 9);

  auto heap_obj = std::make_shared<ShapeHeapObj>();
  heap_obj->slots = heap;
  Value s = Call("vm.builtin.make_shape", {heap_obj, Shape{prog}});
  EXPECT_EQ(std::get<Shape>(s).dims, (std::vector<int64_t>{23, 7}));
}

TEST(BuiltinsTest, MakeShapeErrors) {
  std::vector<int64_t> heap = {4};
  EXPECT_NE(
      ErrorOf([&] { EvalShapeProgram(heap, BinProg(1, 0, 5), false); }).find("division by zero"),
      std::string::npos);
  EXPECT_NE(
      ErrorOf([&] { EvalShapeProgram(heap, BinProg(1, 0, 6), false); }).find("division by zero"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] { EvalShapeProgram(heap, BinProg(1, 5, 3), true); }).find("negative"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvalShapeProgram(heap, {1, 1, 1, 3}, true);
            }).find("heap index 3"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvalShapeProgram(heap, {1, 1, 2, 0}, true);
            }).find("underflow"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvalShapeProgram(heap, {1, 1, 42, 0}, true);
            }).find("unknown opcode"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvalShapeProgram(heap, {2, 1, 0, 1}, true);
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvalShapeProgram(heap, {1, 2, 0, 1, 0, 2}, true);
            }).find("stack"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { EvalShapeProgram(heap, {}, true); }).find("truncated"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] { EvalShapeProgram(heap, BinProg(INT64_MAX, 2, 4), true); }).find("overflow"),
      std::string::npos);
}

TEST(BuiltinsTest, CheckTensorAndMatchShape) {
  NDArray t = NDArray::Empty({4, 3}, ParseDType("float32"));
  EXPECT_NO_THROW(Call("vm.builtin.check_tensor",
                       {t, int64_t{2}, std::string("float32"), std::string("input 'x'")}));
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.check_tensor",
                   {t, int64_t{2}, std::string("int64"), std::string("input 'x'")});
            }),
            "input 'x': expected dtype int64, got float32");
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.check_tensor",
                   {t, int64_t{4}, std::string("float32"), std::string("input 'x'")});
            }),
            "input 'x': expected 4 dims, got 2");

  Value heap = Call("vm.builtin.alloc_shape_heap", {int64_t{2}});
  std::string what = "input 'x'";
  // dim0 binds heap[0]; dim1 must be 3.
  Call("vm.builtin.match_shape",
       {t, heap, Shape{{1, 0, 0, 3}}, what, std::string("batch,channels")});
  EXPECT_EQ(std::get<ShapeHeap>(heap)->slots[0], 4);
  NDArray u = NDArray::Empty({5, 4}, ParseDType("float32"));
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.match_shape",
                   {u, heap, Shape{{2, 0, 0, 3}}, what, std::string("batch,channels")});
            }),
            "input 'x': dim 0 (batch) must equal 4 (bound earlier), got 5");
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.match_shape",
                   {u, heap, Shape{{1, 0, 0, 3}}, what, std::string("batch,channels")});
            }),
            "input 'x': dim 1 (channels) must be 3, got 4");
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.match_shape", {u, heap, Shape{{1, 0, 0, 3}}, what, std::string()});
            }),
            "input 'x': dim 1 must be 3, got 4");
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.match_shape", {u, heap, Shape{{1, 0}}, what, std::string()});
            }).find("expected 1 dims, got 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.match_shape", {u, heap, Shape{{1, 9, 1, 0}}, what, std::string()});
            }).find("heap index 9"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.match_shape", {u, heap});
            }).find("expected 5 arguments"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf([&] {
        Call("vm.builtin.match_shape", {int64_t{1}, heap, Shape{{1, 0}}, what, std::string()});
      }).find("expected a tensor or shape"),
      std::string::npos);
}

TEST(BuiltinsTest, CheckDimsEqual) {
  auto heap = std::make_shared<ShapeHeapObj>();
  heap->slots = {6, 4};
  EXPECT_NO_THROW(Call("vm.builtin.check_dims_equal",
                       {heap, Shape{{2, 1, 1, 0, 3, 0, 3, 0, 2, 4, 0}}, std::string("m")}));
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.check_dims_equal",
                   {heap, Shape{{2, 1, 1, 0, 1, 1, 1}}, std::string("Add 'a': broadcast")});
            }),
            "Add 'a': broadcast: 6 vs 4");
}

TEST(BuiltinsTest, TensorsAndTuples) {
  Value t = Call("vm.builtin.alloc_tensor", {Shape{{2, 3}}, std::string("int32")});
  NDArray a = std::get<NDArray>(t);
  for (int i = 0; i < 6; ++i) static_cast<int32_t*>(a.data())[i] = i;
  NDArray r = std::get<NDArray>(Call("vm.builtin.reshape", {a, Shape{{3, 2}}}));
  EXPECT_EQ(r.data(), a.data());
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.reshape", {a, Shape{{4, 2}}});
            }).find("elements"),
            std::string::npos);
  NDArray c = std::get<NDArray>(Call("vm.builtin.copy", {a}));
  EXPECT_NE(c.data(), a.data());
  EXPECT_EQ(static_cast<int32_t*>(c.data())[5], 5);
  Value tup = Call("vm.builtin.make_tuple", {a, int64_t{7}});
  EXPECT_EQ(std::get<int64_t>(Call("vm.builtin.tuple_getitem", {tup, int64_t{1}})), 7);
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.tuple_getitem", {tup, int64_t{2}});
            }).find("out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.alloc_tensor", {Shape{{2}}, std::string("f32")});
            }).find("unknown dtype"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.alloc_tensor", {int64_t{2}, std::string("int32")});
            }).find("must be a shape"),
            std::string::npos);
  EXPECT_EQ(LookupBuiltin("vm.builtin.nope"), nullptr);
}

TEST(NDArrayTest, BasicsAndErrors) {
  NDArray a = NDArray::Empty({2, 3}, ParseDType("float64"));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(a.nbytes(), 48u);
  EXPECT_EQ(a.dl()->ndim, 2);
  EXPECT_EQ(a.dl()->shape[1], 3);
  EXPECT_THROW(NDArray::Empty({-1}, ParseDType("float32")), Error);
  EXPECT_THROW(NDArray::Empty({INT64_MAX, 4}, ParseDType("float32")), Error);
  EXPECT_THROW(a.CreateView({5}), Error);
  EXPECT_THROW(ParseDType("float8"), Error);
  EXPECT_THROW(NDArray().shape(), Error);
  EXPECT_THROW(NDArray::Empty({1}, ParseDType("float32"), DLDevice{kDLCUDA, 0}), Error);
  EXPECT_EQ(DTypeToString(ParseDType("bool")), "bool");
  EXPECT_EQ(DTypeBytes(ParseDType("bool")), 1u);
  NDArray v = a.CreateView({6});
  EXPECT_EQ(v.data(), a.data());
  a = NDArray();
  EXPECT_EQ(v.numel(), 6);  // the view keeps the data alive
}

}  // namespace
}  // namespace relax::runtime

namespace relax::runtime {
namespace {

TEST(BuiltinsTest, TensorToShapeIsAZeroElementTensorOfThoseDims) {
  NDArray dims = NDArray::Empty({3}, DLDataType{kDLInt, 64, 1});
  int64_t* d = static_cast<int64_t*>(dims.data());
  d[0] = 4;
  d[1] = 0;
  d[2] = 7;
  Value v = Call("vm.builtin.tensor_to_shape", {dims, std::string("Reshape 'r': output")});
  const NDArray& t = std::get<NDArray>(v);
  ASSERT_EQ(t.ndim(), 4);
  EXPECT_EQ(t.shape()[0], 4);
  EXPECT_EQ(t.shape()[1], 0);
  EXPECT_EQ(t.shape()[2], 7);
  EXPECT_EQ(t.shape()[3], 0);
  EXPECT_EQ(t.numel(), 0);
  d[1] = -2;
  EXPECT_EQ(ErrorOf([&] {
              Call("vm.builtin.tensor_to_shape", {dims, std::string("Reshape 'r': output")});
            }),
            "Reshape 'r': output dim 1 computed from tensor data is invalid (negative: -2)");
  NDArray f = NDArray::Empty({2}, DLDataType{kDLFloat, 32, 1});
  EXPECT_NE(ErrorOf([&] {
              Call("vm.builtin.tensor_to_shape", {f, std::string("x")});
            }).find("1-D int64 or int32"),
            std::string::npos);
}

}  // namespace
}  // namespace relax::runtime
