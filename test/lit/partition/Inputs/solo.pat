plugin solo no-merge
pattern relu = nn.relu(*)
