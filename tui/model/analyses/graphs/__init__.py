"""graphs: CUDA graph launches and the kernels they replay.

replay.py finds which graph launch owns each replayed activity and where each replay runs; capture.py
credits replayed kernels to the ops of the graph's capture (from the same trace or a capture file).
"""
