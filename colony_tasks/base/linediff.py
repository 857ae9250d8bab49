"""Where git places the changes between two versions of a file: the changed line ranges a
merge sees (standard library only).

A port of the parts of git's xdiff a merge uses: the histogram diff (``xhistogram.c``, with a
bounded Myers fallback where a line repeats too often) and the change compaction
(``xdl_change_compact``) *without* the indent heuristic (merge-ort sets only the histogram
algorithm; ``git diff`` adds the heuristic, so a patch's hunks can sit one line away from where
a merge puts them). :func:`segments` gives the changes as ``(bs, be, cs, ce)``: base lines
``[bs, be)`` replaced by current lines ``[cs, ce)``, 0-based, half-open, sorted; ``bs == be``
is an insertion between base lines ``bs - 1`` and ``bs``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

Segment = tuple[int, int, int, int]
MAX_CHAIN = 64  # xhistogram's limit: a line more frequent than this falls back to Myers
MAX_EDIT_COST = 4096  # past this many Myers steps the range is one change (a rewrite)


def segments(base: Sequence[str], cur: Sequence[str]) -> list[Segment]:
    """The changes from ``base`` to ``cur`` as git's merge places them."""
    rb = [False] * (len(base) + 2)  # 1-padded change marks, False sentinels at both ends
    rc = [False] * (len(cur) + 2)
    head = 0
    limit = min(len(base), len(cur))
    while head < limit and base[head] == cur[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[-1 - tail] == cur[-1 - tail]:
        tail += 1
    _histogram(base, cur, head, len(base) - tail, head, len(cur) - tail, rb, rc)
    _compact(base, rb, rc)
    _compact(cur, rc, rb)
    return runs(rb[1:-1], rc[1:-1])


def runs(marks_a: Sequence[bool], marks_b: Sequence[bool]) -> list[Segment]:
    """``(i1, i2, j1, j2)`` per change from two change-mark lists whose unchanged lines pair."""
    out: list[Segment] = []
    i = j = 0
    na, nb = len(marks_a), len(marks_b)
    while i < na or j < nb:
        if i < na and j < nb and not marks_a[i] and not marks_b[j]:
            i += 1
            j += 1
            continue
        i0, j0 = i, j
        while i < na and marks_a[i]:
            i += 1
        while j < nb and marks_b[j]:
            j += 1
        if i == i0 and j == j0:  # one side ran out: the rest is a change
            i, j = na, nb
        out.append((i0, i, j0, j))
    return out


def _mark(ra: list[bool], rb: list[bool], a0: int, a1: int, b0: int, b1: int) -> None:
    for i in range(a0, a1):
        ra[i + 1] = True
    for j in range(b0, b1):
        rb[j + 1] = True


def _histogram(
    a: Sequence[str],
    b: Sequence[str],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    ra: list[bool],
    rb: list[bool],
) -> None:
    """xhistogram: split on the longest common run of the rarest lines, recurse on both sides."""
    stack = [(a0, a1, b0, b1)]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        if a0 >= a1 or b0 >= b1:
            _mark(ra, rb, a0, a1, b0, b1)
            continue
        best = _longest_rare_run(a, b, a0, a1, b0, b1)
        if best is None:
            _mark(ra, rb, a0, a1, b0, b1)
        elif isinstance(best, str):  # a line too frequent to split on
            _myers(a, b, a0, a1, b0, b1, ra, rb)
        else:
            as_, ae, bs, be = best
            stack.append((ae + 1, a1, be + 1, b1))
            stack.append((a0, as_, b0, bs))


def _longest_rare_run(
    a: Sequence[str], b: Sequence[str], a0: int, a1: int, b0: int, b1: int
) -> tuple[int, int, int, int] | str | None:
    occ: dict[str, list[int]] = {}
    for i in range(a0, a1):
        occ.setdefault(a[i], []).append(i)
    count = MAX_CHAIN + 1
    best = None
    common = False
    bp = b0
    while bp < b1:
        bnext = bp + 1
        chain = occ.get(b[bp])
        if chain is not None:
            common = True
            if len(chain) <= count:
                idx = 0
                while idx < len(chain):
                    as_ = chain[idx]
                    bs = bp
                    ae, be = as_, bs
                    rc = len(chain)
                    while a0 < as_ and b0 < bs and a[as_ - 1] == b[bs - 1]:
                        as_ -= 1
                        bs -= 1
                        if rc > 1:
                            rc = min(rc, len(occ[a[as_]]))
                    while ae + 1 < a1 and be + 1 < b1 and a[ae + 1] == b[be + 1]:
                        ae += 1
                        be += 1
                        if rc > 1:
                            rc = min(rc, len(occ[a[ae]]))
                    if bnext <= be:
                        bnext = be + 1
                    if best is None or best[1] - best[0] < ae - as_ or rc < count:
                        best = (as_, ae, bs, be)
                        count = rc
                    idx += 1
                    while idx < len(chain) and chain[idx] <= ae:
                        idx += 1
        bp = bnext
    if common and count > MAX_CHAIN:
        return "myers"
    return best


def _myers(
    a: Sequence[str],
    b: Sequence[str],
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    ra: list[bool],
    rb: list[bool],
) -> None:
    """A minimal diff of ``a[a0:a1]`` vs ``b[b0:b1]``; past :data:`MAX_EDIT_COST` steps the
    whole range is one change (bounded time on a rewrite)."""
    n, m = a1 - a0, b1 - b0
    v = {1: 0}
    trace = []
    for d in range(min(n + m, MAX_EDIT_COST) + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v.get(k - 1, -1) < v.get(k + 1, -1)):
                x = v.get(k + 1, 0)
            else:
                x = v.get(k - 1, 0) + 1
            y = x - k
            while x < n and y < m and a[a0 + x] == b[b0 + y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                _backtrack(trace, d, n, m, a0, b0, ra, rb)
                return
    _mark(ra, rb, a0, a1, b0, b1)


def _backtrack(
    trace: list[dict[int, int]],
    d: int,
    x: int,
    y: int,
    a0: int,
    b0: int,
    ra: list[bool],
    rb: list[bool],
) -> None:
    for dd in range(d, 0, -1):
        vv = trace[dd]
        k = x - y
        if k == -dd or (k != dd and vv.get(k - 1, -1) < vv.get(k + 1, -1)):
            pk = k + 1
        else:
            pk = k - 1
        px = vv.get(pk, 0)
        py = px - pk
        while x > px and y > py:
            x -= 1
            y -= 1
        if x == px:
            rb[b0 + py + 1] = True
        else:
            ra[a0 + px + 1] = True
        x, y = px, py


class _Group:
    __slots__ = ("end", "start")

    def __init__(self, marks: list[bool]) -> None:
        self.start = self.end = 0
        while marks[self.end + 1]:
            self.end += 1

    def next(self, marks: list[bool], count: int) -> bool:
        if self.end == count:
            return False
        self.start = self.end = self.end + 1
        while marks[self.end + 1]:
            self.end += 1
        return True

    def prev(self, marks: list[bool]) -> bool:
        if self.start == 0:
            return False
        self.start = self.end = self.start - 1
        while marks[self.start]:
            self.start -= 1
        return True


def _compact(recs: Sequence[str], rchg: list[bool], rchgo: list[bool]) -> None:
    """xdl_change_compact without the indent heuristic: slide each group of changed lines up
    as far as it goes (merging with groups it meets), then down as far as it goes, and line it
    up with a group of the other file where one can be."""
    n, no = len(recs), len(rchgo) - 2

    def down(g: _Group) -> bool:
        if g.end < n and recs[g.start] == recs[g.end]:
            rchg[g.start + 1] = False
            rchg[g.end + 1] = True
            g.start += 1
            g.end += 1
            while rchg[g.end + 1]:
                g.end += 1
            return True
        return False

    def up(g: _Group) -> bool:
        if g.start > 0 and recs[g.start - 1] == recs[g.end - 1]:
            g.start -= 1
            g.end -= 1
            rchg[g.start + 1] = True
            rchg[g.end + 1] = False
            while rchg[g.start]:
                g.start -= 1
            return True
        return False

    g, go = _Group(rchg), _Group(rchgo)
    while True:
        if g.end != g.start:
            while True:
                size = g.end - g.start
                end_matching_other = -1
                while up(g):
                    go.prev(rchgo)
                earliest_end = g.end
                if go.end > go.start:
                    end_matching_other = g.end
                while down(g):
                    go.next(rchgo, no)
                    if go.end > go.start:
                        end_matching_other = g.end
                if size == g.end - g.start:
                    break
            if g.end != earliest_end and end_matching_other != -1:
                while go.end == go.start:
                    up(g)
                    go.prev(rchgo)
        if not g.next(rchg, n):
            break
        go.next(rchgo, no)
