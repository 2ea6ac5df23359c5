"""Run order of the nodes: topological, keeping file order where it can; cycles are errors.

Ordering works on the YAML nodes (an expression's intermediates travel with the
node they were written in), so a cycle prints as the names the user wrote.
"""
from __future__ import annotations

import heapq

from .diagnostics import Collector
from .spec import GraphSpec, NodeSpec, refs_in


def _owner_dependencies(spec: GraphSpec) -> dict[str, set[str]]:
    owner_of = {n.name: n.owner for n in spec.nodes}
    deps: dict[str, set[str]] = {}
    for node in spec.nodes:
        owner = node.owner
        wanted = deps.get(owner)
        if wanted is None:
            wanted = deps[owner] = set()
        for ref in refs_in(node.args) + refs_in(node.kwargs.values()) if node.kwargs else refs_in(node.args):
            used = owner_of.get(ref.name)
            if used is not None and (used != owner or ref.name == owner):
                wanted.add(used)        # another node, or `x: neg(x)` using itself
    return deps


def _in_file_order(nodes: list[NodeSpec]) -> bool:
    """Whether every node uses only nodes written before it: one pass, no dependency sets
    (a file is almost always written in order)."""
    owner_of = {n.name: n.owner for n in nodes}
    finished: set[str] = set()          # owners whose every op came before this one
    current = None
    for node in nodes:
        owner = node.owner
        if owner != current:
            if current is not None:
                finished.add(current)
            current = owner
        for ref in refs_in(node.args) + refs_in(node.kwargs.values()) if node.kwargs else refs_in(node.args):
            used = owner_of.get(ref.name)
            if used is not None and used not in finished and (used != owner or ref.name == owner):
                return False            # a later node, or `x: neg(x)` using itself
    return True


def run_order(spec: GraphSpec, collector: Collector) -> list[NodeSpec]:
    """The nodes in run order; nodes on a cycle (reported) and those after them are left out."""
    if _in_file_order(spec.nodes):
        return list(spec.nodes)      # what Kahn's algorithm below would give
    owners = list(dict.fromkeys(n.owner for n in spec.nodes))
    index = {name: i for i, name in enumerate(owners)}
    deps = _owner_dependencies(spec)
    waiting = {name: len(deps[name]) for name in owners}
    users: dict[str, list[str]] = {name: [] for name in owners}
    for name in owners:
        for dep in deps[name]:
            users[dep].append(name)
    # Kahn's algorithm with the file position as priority: of all ready nodes the
    # earliest written runs first, so a file already in order runs as written.
    ready = [index[n] for n in owners if waiting[n] == 0]
    heapq.heapify(ready)
    ordered: list[str] = []
    while ready:
        name = owners[heapq.heappop(ready)]
        ordered.append(name)
        for user in users[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, index[user])
    if len(ordered) < len(owners):
        _report_cycles(spec, [n for n in owners if waiting[n] > 0], deps, collector)
    by_owner: dict[str, list[NodeSpec]] = {}
    for node in spec.nodes:
        by_owner.setdefault(node.owner, []).append(node)
    return [node for name in ordered for node in by_owner[name]]


_SHOWN = 20         # names of a cycle written in its message, at most


def _report_cycles(spec: GraphSpec, stuck: list[str], deps: dict[str, set[str]], collector: Collector) -> None:
    """One error per cycle among the stuck nodes, at the cycle's first node in the file."""
    line = {n.owner: n.pos.line for n in spec.nodes}
    pos = {}
    for n in spec.nodes:
        pos.setdefault(n.owner, spec.doc.key_pos(n.path))
    stuck_set = set(stuck)
    written = {name: i for i, name in enumerate(stuck)}      # file order of the stuck nodes
    reported: set[str] = set()
    for start in stuck:
        if start in reported:
            continue
        cycle = _find_cycle(start, deps, stuck_set)
        if cycle is None or reported.intersection(cycle):
            continue
        first = min(cycle, key=written.__getitem__)
        i = cycle.index(first)
        path = cycle[i:] + cycle[:i] + [first]
        shown = [f"{name} (line {line[name]})" for name in path]
        if len(shown) > _SHOWN:      # a message a person can read: the start and the end of a long cycle
            shown = shown[:_SHOWN - 5] + [f"... ({len(shown) - _SHOWN} more)"] + shown[-5:]
        collector.error("AG021", f"cycle: {' -> '.join(shown)}; each node uses the next", pos[first])
        reported.update(cycle)


def _find_cycle(start: str, deps: dict[str, set[str]], allowed: set[str]) -> list[str] | None:
    """A cycle reachable from `start`, as the list of names along it (each uses the next).

    A depth-first walk with its own stack (a chain of 100,000 nodes is deeper than
    Python's recursion): each frame is a name and the iterator over its sorted deps."""
    stack: list[str] = [start]
    on_stack: dict[str, int] = {start: 0}
    frames = [iter(sorted(deps[start] & allowed))]
    done: set[str] = set()
    while frames:
        dep = next(frames[-1], None)
        if dep is None:
            name = stack.pop()
            frames.pop()
            del on_stack[name]
            done.add(name)
        elif dep in on_stack:
            return stack[on_stack[dep]:]
        elif dep not in done:
            on_stack[dep] = len(stack)
            stack.append(dep)
            frames.append(iter(sorted(deps[dep] & allowed)))
    return None
