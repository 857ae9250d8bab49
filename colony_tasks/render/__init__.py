"""The renderer: what an agent or a human is shown, worded from the use cases' plain results.

:mod:`.briefing` words the hooks' briefings, deltas and warnings, with :mod:`.conflicts`
(held-file and collision warnings) and :mod:`.plan` (a plan's block); :mod:`.lines` renders one
thread item on one line and names sessions. Standard library only.
"""
