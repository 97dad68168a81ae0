"""The analyses of a trace: key_averages ops, kernels, summary, explain rules, diff, call tree, details."""
