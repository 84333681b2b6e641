// decompose-recurrent: a recurrent layer (relax.nn.lstm / gru / rnn) becomes the gates' input
// part for every time step as one matmul, then the time-step op (relax.nn.lstm_steps /
// gru_steps / rnn_steps) that runs the recurrence on it.
#ifndef RELAX_REWRITE_DECOMPOSE_RECURRENT_H_
#define RELAX_REWRITE_DECOMPOSE_RECURRENT_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::rewrite {

/// Rewrites each `relax.nn.{lstm,gru,rnn}(X, W, R, opt...)` (lib/op/recurrent.cc) into
///   gates_x = reshape(matmul(reshape(X, [1, S*B, I]), W^T), [D, S, B, G*H])
///   relax.nn.<op>_steps(gates_x, R, opt...)            (the same attributes)
/// (layout 1: X is [B, S, I] and gates_x [D, B, S, G*H]). W^T is computed at compile time when
/// W is a constant (permute_dims otherwise). The matmul is an ordinary op: the target's matmul
/// schedule applies. Both halves of B stay with the steps op (any hidden size, also symbolic).
/// Not optional: the layer ops have no kernel of their own.
void DecomposeRecurrent(IRModule* mod, const PassContext& ctx);

}  // namespace relax::rewrite

#endif  // RELAX_REWRITE_DECOMPOSE_RECURRENT_H_
