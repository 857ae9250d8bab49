"""The renderer: what an agent or a human is shown, worded from the use cases' plain results.

:mod:`.briefing` words the hooks' briefings, deltas and warnings; :mod:`.lines` one thread item
on one line. Standard library only.
"""
