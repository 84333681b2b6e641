plugin bad
pattern p = nn.relu(nn.conv2d(*, const){colour == 3})
