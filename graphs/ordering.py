"""Run order of the nodes: topological, keeping file order where it can; cycles are errors.

Ordering works on the YAML nodes (an expression's intermediates travel with the
node they were written in), so a cycle prints as the names the user wrote.
"""
from __future__ import annotations

import heapq

from .diagnostics import Collector
from .spec import GraphSpec, NodeSpec, tensor_refs


def _owner_dependencies(spec: GraphSpec) -> dict[str, set[str]]:
    owner_of = {n.name: n.owner for n in spec.nodes}
    deps: dict[str, set[str]] = {}
    for node in spec.nodes:
        wanted = deps.setdefault(node.owner, set())
        for ref in tensor_refs(node.args + list(node.kwargs.values())):
            owner = owner_of.get(ref.name)
            if owner is not None and owner != node.owner:
                wanted.add(owner)
            elif owner == node.owner and ref.name == node.owner:
                wanted.add(owner)        # `x: neg(x)` uses itself
    return deps


def run_order(spec: GraphSpec, collector: Collector) -> list[NodeSpec]:
    """The nodes in run order; nodes on a cycle (reported) and those after them are left out."""
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


def _report_cycles(spec: GraphSpec, stuck: list[str], deps: dict[str, set[str]], collector: Collector) -> None:
    """One error per cycle among the stuck nodes, at the cycle's first node in the file."""
    line = {n.owner: n.pos.line for n in spec.nodes}
    pos = {}
    for n in spec.nodes:
        pos.setdefault(n.owner, spec.doc.key_pos(n.path))
    stuck_set = set(stuck)
    reported: set[str] = set()
    for start in stuck:
        if start in reported:
            continue
        cycle = _find_cycle(start, deps, stuck_set)
        if cycle is None or reported.intersection(cycle):
            continue
        first = min(cycle, key=stuck.index)
        i = cycle.index(first)
        path = cycle[i:] + cycle[:i] + [first]
        text = " -> ".join(f"{name} (line {line[name]})" for name in path)
        collector.error("AG021", f"cycle: {text}; each node uses the next", pos[first])
        reported.update(cycle)


def _find_cycle(start: str, deps: dict[str, set[str]], allowed: set[str]) -> list[str] | None:
    """A cycle reachable from `start`, as the list of names along it (each uses the next)."""
    stack: list[str] = []
    on_stack: dict[str, int] = {}
    done: set[str] = set()

    def visit(name: str) -> list[str] | None:
        on_stack[name] = len(stack)
        stack.append(name)
        for dep in sorted(deps[name] & allowed):
            if dep in on_stack:
                return stack[on_stack[dep]:]
            if dep not in done:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        del on_stack[name]
        done.add(name)
        return None

    return visit(start)
