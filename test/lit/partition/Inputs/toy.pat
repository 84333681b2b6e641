plugin toy merge
# conv2d + bias + relu first (longest chain), then conv2d + relu with a symbolic-width limit.
pattern conv2d_bias_relu = nn.relu(add(nn.conv2d(*, const){dtype == float32}, const))
pattern conv2d_relu = nn.relu(nn.conv2d(*, const){shape[3] <= 4096})
pattern matmul_bias = add?(matmul(*, const), const)
