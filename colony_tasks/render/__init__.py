"""The renderer: what an agent or a human is shown, worded from the use cases' plain results.

:mod:`.briefing` words the hooks' briefings, deltas and warnings, with :mod:`.conflicts`
(held-file and collision warnings), :mod:`.plan` (a plan's block) and :mod:`.names` (how a
session is named); :mod:`.lines` one thread item on one line. Standard library only.
"""
