"""explain: the rules that read a trace's analyses and say what bounds it, in words and numbers.

rules.py holds the finders and `explain()`, with RULES in the order they are shown; graphs.py and
roofline.py hold the rules about CUDA graphs and about the roofline; findings.py is the Finding a rule
returns (data, worded by tui/tables/explain.py); readings.py turns a summary into the overview's verdict.
"""
