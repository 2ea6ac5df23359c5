"""Safe YAML loading that remembers where every key and value came from.

PyYAML's loaders forget positions and silently keep the last of two duplicate
keys. Here the document is *composed* (parsed into nodes, nothing constructed),
then converted to plain Python values by hand: only the YAML core tags are
accepted, so no tag can build a Python object, every mapping is checked for
duplicate keys, and each value's position is kept in a map keyed by its path
(`("nodes", "c")`, `("inputs", "x", "shape", 0)`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from .diagnostics import Collector, Pos, Record


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader, with YAML 1.2's floats: `1e-3` is the number every user means."""


# NOTE: YAML 1.1 wants a dot and a signed exponent in a float (`1.0e+3`), so PyYAML reads
# `1e-3` and `1.0e39` as text; YAML 1.2's floats are added after 1.1's own resolvers.
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$"),
    list("-+.0123456789"))

# A graph file is a few levels deep (inputs > x > value > a 64-dimensional literal);
# deeper nesting is hostile or a mistake, and would exhaust Python's stack later.
MAX_DEPTH = 100
# Aliases may repeat this many values in all: enough to share settings between many
# inputs, far too few for a "billion laughs" file (9 aliases of 9 aliases ... 9**9).
MAX_ALIAS_VALUES = 10_000

_CORE_SCALAR_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
}
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"

Path = tuple


class ScalarSource(Record):
    """Where a scalar's text sits in the file, so a column inside it can be found."""
    __slots__ = ("start", "end", "style")

    def __init__(self, start: Pos, end: Pos, style: str):
        self.start = start
        self.end = end
        self.style = style          # "" plain, "'" single, '"' double, "|" literal, ">" folded


class NodesBlock:
    """The `nodes:` block read in bulk (`_bulk_nodes`): every position in it is worked out
    from its line and indent when asked for, as PyYAML's marks would give it, rather than
    kept per node (a 1,000,000-node file would hold 3,000,000 positions nobody reads)."""
    __slots__ = ("line", "indent", "nodes", "_index")

    def __init__(self, line: int, indent: int, nodes: dict[str, str]):
        self.line = line            # 0-based line of `nodes:`
        self.indent = indent
        self.nodes = nodes          # name -> expression, in file order (the document's data)
        self._index: dict[str, int] | None = None

    def row(self, i: int) -> int:
        """The 1-based line of the block's node number `i`."""
        return self.line + 2 + i

    def value_col(self, name: str) -> int:
        """The 1-based column where the expression of node `name` starts."""
        return self.indent + len(name) + 3

    def index(self, name: str) -> int | None:
        if self._index is None:     # only a diagnostic asks, once per document
            self._index = {n: i for i, n in enumerate(self.nodes)}
        return self._index.get(name)

    def pos(self, path: Path, key: bool = False) -> Pos:
        i = self.index(path[1]) if len(path) > 1 else None
        if i is None:
            return Pos(self.line + 2, self.indent + 1)
        return Pos(self.row(i), self.indent + 1 if key and len(path) == 2 else self.value_col(path[1]))

    def scalar(self, path: Path) -> ScalarSource | None:
        i = self.index(path[1]) if len(path) == 2 else None
        if i is None:
            return None
        row, col = self.row(i), self.value_col(path[1])
        return ScalarSource(Pos(row, col), Pos(row, col + len(self.nodes[path[1]])), "")


@dataclass
class Document:
    """A loaded YAML document: plain values plus the position of each one."""
    data: Any
    source: str
    values: dict[Path, Pos] = field(default_factory=dict)     # where each value starts
    keys: dict[Path, Pos] = field(default_factory=dict)       # where the key naming it starts
    scalars: dict[Path, ScalarSource] = field(default_factory=dict)
    block: NodesBlock | None = None     # the `nodes:` block read in bulk: its positions are not in the maps
    # per document, not per position asked for: a 5,000-node file asks for 15,000
    _lines: list[str] | None = field(default=None, repr=False)
    _scalar_maps: dict[Path, tuple[str, list[Pos]] | None] = field(default_factory=dict, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines

    def pos(self, path: Path) -> Pos:
        """The value's position, or its nearest enclosing value's (always something)."""
        if self.block is not None and path[:1] == ("nodes",):
            return self.block.pos(path)
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, Pos(1, 1))

    def key_pos(self, path: Path) -> Pos:
        if self.block is not None and len(path) == 2 and path[0] == "nodes":
            return self.block.pos(path, key=True)
        return self.keys.get(path) or self.pos(path)

    def scalar(self, path: Path) -> ScalarSource | None:
        """Where the scalar at `path` is written, if it is one."""
        if self.block is not None and path[:1] == ("nodes",):
            return self.block.scalar(path)
        return self.scalars.get(path)


def _pos(mark) -> Pos:
    return Pos(mark.line + 1, mark.column + 1)


class _Converter:
    """Node tree to plain values. Recursive: `_compose` has bounded the depth and
    refused recursive aliases, so the tree is at most MAX_DEPTH deep and finite."""

    def __init__(self, collector: Collector, doc: Document):
        self.collector = collector
        self.doc = doc
        self.constructor = SafeConstructor()

    def convert(self, node, path: Path) -> Any:
        start = node.start_mark
        self.doc.values[path] = start = Pos(start.line + 1, start.column + 1)
        if node.__class__ is yaml.ScalarNode:
            end = node.end_mark
            self.doc.scalars[path] = ScalarSource(start, Pos(end.line + 1, end.column + 1), node.style or "")
            return self.scalar(node, path)
        if isinstance(node, yaml.SequenceNode):
            self.check_tag(node, _SEQ_TAG)
            return [self.convert(item, path + (i,)) for i, item in enumerate(node.value)]
        self.check_tag(node, _MAP_TAG)
        return self.mapping(node, path)

    def check_tag(self, node, expected: str) -> None:
        if node.tag != expected:
            self.collector.error("AG003", f"YAML tag {_short_tag(node.tag)} is not allowed here",
                                 _pos(node.start_mark))

    def scalar(self, node, path: Path) -> Any:
        if node.tag == _STR_TAG:
            return node.value           # what SafeConstructor makes of a string, without its bookkeeping
        if node.tag == _TIMESTAMP_TAG and not node.style:
            return node.value           # an unquoted date is text here, not a datetime
        if node.tag not in _CORE_SCALAR_TAGS:
            self.collector.error("AG003", f"YAML tag {_short_tag(node.tag)} is not allowed "
                                 "(graph files are loaded safely; only plain values)", _pos(node.start_mark))
            return node.value
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as exc:
            self.collector.error("AG005", f"cannot read this {_short_tag(node.tag)} value: {exc}",
                                 _pos(node.start_mark))
            return node.value
        if type(value) is float and math.isinf(value) and "inf" not in node.value.lower():
            # `1e400` silently becomes inf; only `.inf` means it.
            self.collector.error("AG005", f"{node.value} is beyond the float range (largest is about 1.8e308; "
                                 "write .inf for infinity)", _pos(node.start_mark))
        return value

    def mapping(self, node, path: Path) -> dict:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                self.collector.error("AG003", "YAML merge keys (<<) are not supported; write the keys out",
                                     _pos(key_node.start_mark))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.collector.error("AG005", "mapping keys must be plain names, not lists or mappings",
                                     _pos(key_node.start_mark))
                continue
            # NOTE: keys stay the text as written: an input called `on` or `1` is a
            # name, not YAML 1.1's boolean True or the integer 1.
            key = key_node.value
            key_pos = _pos(key_node.start_mark)
            child = path + (key,)
            if key in out:
                first = self.doc.keys[child]
                self.collector.error("AG002", f"duplicate key '{key}' (first defined at line {first.line})",
                                     key_pos)
                continue
            self.doc.keys[child] = key_pos
            out[key] = self.convert(value_node, child)
        return out


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


class _Refused(Exception):
    """The document is valid YAML but agrad will not build it (too deep, aliases too big)."""

    def __init__(self, code: str, message: str, mark):
        super().__init__(message)
        self.code, self.message, self.mark = code, message, mark


def _compose(source: str):
    """The first (and only) document's node tree, built from parser events without recursion.

    PyYAML's composer recurses once per nesting level and shares aliased nodes, which
    the conversion then expands; here depth is bounded and every alias is charged the
    number of values it repeats, so both limits are reported where they are crossed.
    """
    loader = _Loader(source)
    try:
        loader.get_event()                                  # stream start
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()                                  # document start
        root = _compose_document(loader)
        loader.get_event()                                  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            event = loader.get_event()
            raise yaml.composer.ComposerError("expected a single document in the stream", root.start_mark,
                                              "but found another document", event.start_mark)
        return root
    finally:
        loader.dispose()


def _compose_document(loader):
    anchors: dict[str, tuple[Any, int | None]] = {}         # name -> (node, values in it; None while open)
    stack: list[list] = []                                  # [node, values so far, anchor, flat items]
    expanded = 0
    get_event, resolve = loader.get_event, loader.resolve
    while True:
        event = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:                        # the common case first
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(yaml.ScalarNode, event.value, event.implicit)
            node, size = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style), 1
            if event.anchor is not None:
                anchors[event.anchor] = (node, 1)
        elif kind is yaml.SequenceEndEvent or kind is yaml.MappingEndEvent:
            node, size, anchor, items = stack.pop()
            node.end_mark = event.end_mark
            node.value = items if kind is yaml.SequenceEndEvent else list(zip(items[::2], items[1::2]))
            if anchor is not None:
                anchors[anchor] = (node, size)
        elif kind is yaml.AliasEvent:
            node, size = anchors.get(event.anchor, (None, 0))
            if node is None:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}",
                                                  event.start_mark)
            if size is None:
                raise _Refused("AG005", "recursive YAML alias: a value cannot contain itself", event.start_mark)
            expanded += size
            if expanded > MAX_ALIAS_VALUES:
                raise _Refused("AG001", f"YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values "
                               "(aliases of aliases multiply); write the values out", event.start_mark)
        else:                                               # a sequence or mapping starts
            if len(stack) >= MAX_DEPTH:
                raise _Refused("AG001", f"YAML nested more than {MAX_DEPTH} levels deep", event.start_mark)
            node_kind = yaml.SequenceNode if kind is yaml.SequenceStartEvent else yaml.MappingNode
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(node_kind, None, event.implicit)
            node = node_kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                anchors[event.anchor] = (node, None)
            stack.append([node, 1, event.anchor, []])
            continue
        if not stack:
            return node
        stack[-1][1] += size
        stack[-1][3].append(node)


class NotUtf8(Exception):
    """A graph file's bytes are not UTF-8: where the first bad byte is."""

    def __init__(self, pos: Pos, message: str):
        super().__init__(message)
        self.pos, self.message = pos, message


def decode_source(data: bytes) -> str:
    """A graph file's text; NotUtf8 at the line and column (in characters) of the first
    byte that is not UTF-8, so an editor can jump to it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        col = len(data[line_start:exc.start].decode("utf-8")) + 1     # all good bytes before it
        raise NotUtf8(Pos(line, col), f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot start or continue a "
                                      "character (graph files are UTF-8)") from None


# ---- the `nodes:` block read in bulk ----------------------------------------------
# A generated file is mostly `  name: expression` lines: PyYAML composes each into
# events and nodes in Python, about 10 µs a line. When every line of the block is a
# plain one-line scalar that YAML reads as the text written (no quote, comment, tab,
# flow or block indicator, anchor, tag, continuation, duplicate), the block is cut out
# with one regular expression and the rest of the document goes through PyYAML with the
# block replaced by `{}` and as many empty lines, so every other position is unchanged.
# Anything else reads the whole document through PyYAML, as before, so every
# diagnostic (duplicate keys, tags, depth, syntax errors) is PyYAML's.

_NODES_LINE = re.compile(r"^nodes:\n", re.M)
# A plain scalar's first character may not be an indicator; the rest may not hold `: `,
# ` #`, quotes, tabs or a line break. Keys: identifiers (PyYAML refuses implicit keys
# of over 1024 characters). No trailing blank: YAML drops it, so the text would differ.
_BLOCK = {}
_EXPR = r"[A-Za-z0-9_(](?:[A-Za-z0-9_.()+\-*/,\[\] =<>%~^&|!]*[A-Za-z0-9_.()+\-*/,\[\]=<>%~^&|!])?"


def _block_pattern(indent: int):
    if indent not in _BLOCK:
        line = " " * indent + r"[A-Za-z_][A-Za-z0-9_]{0,1000}: " + _EXPR + r"\n"
        _BLOCK[indent] = (re.compile(f"(?:{line})*"),
                          re.compile(" " * indent + r"([A-Za-z_][A-Za-z0-9_]*): (.*)\n"))
    return _BLOCK[indent]


def _bulk_nodes(source: str):
    """(the source with the `nodes:` block cut out, its line index, the block's indent,
    its (name, text) pairs), or None when the block is not one that can be read in bulk."""
    found = _NODES_LINE.findall(source)
    if len(found) != 1:
        return None
    head = _NODES_LINE.search(source)
    start = head.end()
    indent = len(source) - len(source[start:].lstrip(" ")) - start
    if indent == 0:
        return None
    text = source if source.endswith("\n") else source + "\n"
    lines_re, pair_re = _block_pattern(indent)
    end = lines_re.match(text, start).end()
    if end == start:
        return None
    after = end
    while after < len(text) and text[after] == "\n":
        after += 1
    if after < len(text) and not (text[after].isascii() and (text[after].isalpha() or text[after] == "_")):
        return None                 # a comment, a continuation, a document marker: PyYAML reads it all
    pairs = pair_re.findall(text, start, end)
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        return None                 # duplicate keys: PyYAML's composition reports them
    resolve = _Loader.resolve
    for _, expr in pairs:
        # Only text without a blank or a bracket can read as a number, bool, null or date.
        if " " not in expr and "(" not in expr and \
                resolve(_Loader, yaml.ScalarNode, expr, (True, False)) != _STR_TAG:
            return None
    line = source.count("\n", 0, head.start())
    rest = source[:head.start()] + "nodes: {}\n" + "\n" * len(pairs) + source[end:]
    return rest, line, indent, pairs


def _bulk_root(root, line: int) -> bool:
    """The rest of the document is a mapping whose one `nodes` key is the line cut at."""
    if root.__class__ is not yaml.MappingNode or root.tag != _MAP_TAG:
        return False
    found = [(k, v) for k, v in root.value if k.__class__ is yaml.ScalarNode and k.value == "nodes"]
    if len(found) != 1:
        return False
    key, value = found[0]
    return (not key.style and key.start_mark.line == line and key.start_mark.column == 0
            and value.__class__ is yaml.MappingNode and not value.value and value.start_mark.line == line
            and value.start_mark.column == 7)


def load_yaml(source: str, collector: Collector) -> Document | None:
    """Parse `source`; problems go to `collector`. None when the YAML cannot be parsed at all."""
    doc = Document(data=None, source=source)
    bulk = _bulk_nodes(source)
    if bulk is not None:
        rest, line, indent, pairs = bulk
        try:
            root = _compose(rest)
        except (yaml.YAMLError, _Refused):
            root = None             # reported as PyYAML reports the whole document, below
        if root is not None and _bulk_root(root, line):
            doc.data = _Converter(collector, doc).convert(root, ())
            doc.data["nodes"] = nodes = dict(pairs)
            doc.block = NodesBlock(line, indent, nodes)
            return doc
        doc = Document(data=None, source=source)
    return _load_whole(source, collector, doc)


def _load_whole(source: str, collector: Collector, doc: Document) -> Document | None:
    try:
        root = _compose(source)
    except _Refused as exc:
        collector.error(exc.code, exc.message, _pos(exc.mark))
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            message = f"{exc.problem} ({exc.context})"
        collector.error("AG001", message, _pos(mark) if mark else Pos(1, 1))
        return None
    except yaml.YAMLError as exc:           # reader errors: bad bytes or control characters
        mark = getattr(exc, "problem_mark", None) or None
        collector.error("AG001", str(exc).splitlines()[0], _pos(mark) if mark else Pos(1, 1))
        return None
    if root is None:
        doc.data = None
        return doc
    doc.data = _Converter(collector, doc).convert(root, ())
    return doc


# ---- columns inside a scalar ---------------------------------------------------

_SIMPLE_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
                   "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
                   "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _flow_scalar_map(lines: list[str], src: ScalarSource) -> tuple[str, list[Pos]]:
    """Rebuild a plain or quoted scalar's value from the file, with each char's position."""
    text: list[str] = []
    where: list[Pos] = []
    line, col = src.start.line - 1, src.start.col - 1
    end_line, end_col = src.end.line - 1, src.end.col - 1
    quote = src.style if src.style in ("'", '"') else ""
    if quote:
        col += 1
        end_col -= 1                          # the closing quote is not content
    while line < end_line or (line == end_line and col < end_col):
        row = lines[line] if line < len(lines) else ""
        stop = end_col if line == end_line else len(row)
        while col < stop:
            ch = row[col]
            if quote == "'" and ch == "'" and col + 1 < len(row) and row[col + 1] == "'":
                text.append("'"); where.append(Pos(line + 1, col + 1)); col += 2
                continue
            if quote == '"' and ch == "\\":
                nxt = row[col + 1] if col + 1 < len(row) else ""
                if nxt == "":                  # escaped line break: the lines join with nothing between
                    col = len(row)
                    break
                if nxt in _HEX_ESCAPES:
                    width = _HEX_ESCAPES[nxt]
                    try:
                        text.append(chr(int(row[col + 2:col + 2 + width], 16)))
                    except ValueError:
                        return "", []
                    where.append(Pos(line + 1, col + 1)); col += 2 + width
                    continue
                text.append(_SIMPLE_ESCAPES.get(nxt, nxt)); where.append(Pos(line + 1, col + 1)); col += 2
                continue
            text.append(ch); where.append(Pos(line + 1, col + 1)); col += 1
        if line >= end_line:
            break
        escaped_break = quote == '"' and row.rstrip().endswith("\\") and not row.rstrip().endswith("\\\\")
        if not escaped_break:
            while text and text[-1] in " \t":  # folding drops trailing blanks of a line
                text.pop(); where.pop()
        break_at = Pos(line + 1, len(row) + 1)
        line += 1
        blank = 0
        while line < end_line and not lines[line].strip():
            blank += 1
            line += 1
        row = lines[line] if line < len(lines) else ""
        col = len(row) - len(row.lstrip(" \t"))
        if escaped_break:
            continue
        for _ in range(blank) if blank else range(1):
            text.append("\n" if blank else " "); where.append(break_at)
    return "".join(text), where


def _literal_block_map(lines: list[str], src: ScalarSource) -> tuple[str, list[Pos]]:
    """Rebuild a `|` block scalar's value: content lines keep their breaks."""
    first = src.start.line                     # 0-based index of the line after the `|` header
    body = lines[first:src.end.line]
    indent = next((len(r) - len(r.lstrip(" ")) for r in body if r.strip()), 0)
    text: list[str] = []
    where: list[Pos] = []
    for i, row in enumerate(body):
        for j, ch in enumerate(row[indent:]):
            text.append(ch); where.append(Pos(first + i + 1, indent + j + 1))
        text.append("\n"); where.append(Pos(first + i + 1, len(row) + 1))
    return "".join(text), where


def position_in_scalar(doc: Document, path: Path, offset: int) -> Pos:
    """The file position of character `offset` of the string scalar at `path`.

    Exact for plain, quoted and `|` scalars; any scalar whose rebuilt text does not
    match what YAML read (an unusual folding) falls back to the scalar's start.
    """
    return scalar_locator(doc, path)(offset)


def scalar_locator(doc: Document, path: Path):
    """`position_in_scalar(doc, path, offset)` as a function of `offset`, the scalar looked at once."""
    src = doc.scalar(path)
    value = _value_at(doc.data, path)
    if src is None or not isinstance(value, str):
        pos = doc.pos(path)
        return lambda offset: pos
    found = _as_written(doc, src, value)
    if found is not None:
        line, start = found
        width, end = len(value), start + len(value)
        return lambda offset: Pos(line, start + offset if offset < width else end)
    if path not in doc._scalar_maps:
        doc._scalar_maps[path] = _scalar_map(doc.lines, src, value)
    mapped = doc._scalar_maps[path]
    if mapped is None:
        return lambda offset: src.start
    where = mapped[1]
    after = Pos(where[-1].line, where[-1].col + 1)
    return lambda offset: where[offset] if offset < len(where) else after


def one_line_scalar(doc: Document, path: Path, value: str) -> tuple[int, int] | None:
    """(line, column) of the first character of the string scalar `value` at `path` when it
    is one line written as read (no escapes, no doubled quotes), so that character `i` is at
    column + i; else None."""
    src = doc.scalar(path)
    return None if src is None else _as_written(doc, src, value)


def _as_written(doc: Document, src: ScalarSource, value: str) -> tuple[int, int] | None:
    if src.start.line == src.end.line and value and src.style in ("", "'", '"'):
        # One line, written as read: the column is arithmetic, without rebuilding the scalar
        # character by character (a large file asks for over a million).
        first = src.start.col - (not src.style)             # 0-based column of the text's first character
        width = src.end.col - 1 - first - (src.style != "")   # characters between the quotes
        if width == len(value) and doc.lines[src.start.line - 1][first:first + width] == value:
            return src.start.line, first + 1
    return None


def _scalar_map(lines: list[str], src: ScalarSource, value: str) -> tuple[str, list[Pos]] | None:
    """The scalar's text rebuilt with each character's position, or None when the rebuilt
    text is not what YAML read (an unusual folding, a `>` scalar)."""
    if src.style in ("", "'", '"'):
        text, where = _flow_scalar_map(lines, src)
    elif src.style == "|":
        text, where = _literal_block_map(lines, src)
        text, where = text[:len(value)], where[:len(value)]
    else:
        return None
    if text != value or not where:
        return None
    return text, where


def _value_at(data: Any, path: Path) -> Any:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data
