"""A micrograd-style oracle: scalar-free, NumPy-valued nodes, backprop by one
topological sort. Independent of agrad's engine; the tests compare the two."""
import numpy as np


class Value:
    def __init__(self, data, parents=(), local_grads=()):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = np.zeros_like(self.data)
        self._parents = parents
        self._local = local_grads      # functions: upstream grad -> contribution to each parent

    def __add__(self, other):
        return Value(self.data + other.data, (self, other), (lambda g: g, lambda g: g))

    def __mul__(self, other):
        return Value(self.data * other.data, (self, other), (lambda g: g * other.data, lambda g: g * self.data))

    def __sub__(self, other):
        return Value(self.data - other.data, (self, other), (lambda g: g, lambda g: -g))

    def tanh(self):
        t = np.tanh(self.data)
        return Value(t, (self,), (lambda g: g * (1 - t * t),))

    def exp(self):
        e = np.exp(self.data)
        return Value(e, (self,), (lambda g: g * e,))

    def sum(self):
        return Value(self.data.sum(), (self,), (lambda g: np.broadcast_to(g, self.data.shape),))

    def backward(self):
        topo, visited = [], set()
        stack = [(self, False)]
        while stack:                      # iterative post-order, like micrograd's build_topo
            v, expanded = stack.pop()
            if expanded:
                topo.append(v)
                continue
            if id(v) in visited:
                continue
            visited.add(id(v))
            stack.append((v, True))
            for p in v._parents:
                if id(p) not in visited:
                    stack.append((p, False))
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            for p, local in zip(v._parents, v._local):
                p.grad = p.grad + local(v.grad)
