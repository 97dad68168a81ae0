"""explain: the rules that read a trace's analyses and say what bounds it, in words and numbers.

rules.py holds the finders and `explain()`, with RULES in the order they are shown; graphs.py,
roofline.py and queue.py hold the rules about CUDA graphs, the roofline and the launch queue; findings.py
is the Finding a rule returns (data, worded by tui/tables/explain.py); readings.py turns a summary into the
overview's verdict.
"""
