"""explain: the rules that read a trace's analyses and say what bounds it, in words and numbers.

rules.py holds the finders and `explain()`, with RULES in the order they are found; graphs.py, roofline.py,
queue.py and comms.py hold the rules about CUDA graphs, the roofline, the launch queue and collectives;
findings.py is the Finding a rule returns (data, worded by tui/tables/explain.py); fixes.py maps a finding to the
what-if its fix is, and savings.py solves those on the critical path and orders the findings by what they save;
readings.py turns a summary into the overview's verdict; uses.py reads what the run already uses (torch.compile,
graphs, its math's dtype, channels_last), so that no advice recommends it, and says what comes next.
"""
