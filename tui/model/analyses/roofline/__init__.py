"""roofline: how fast each op ran against what the GPU can do.

flops.py counts FLOPs and bytes per op from its shapes (TraceLens's conventions); peaks.py knows each
GPU's roofs (data/gpus.toml, or a --peaks file); points.py places each (op, shapes, dtype) on the
roofline; achieved.py gives the TFLOP/s and % of roof columns of the ops and kernels tables.
"""
