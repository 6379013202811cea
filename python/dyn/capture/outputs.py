"""Outputs: what a frame returns (or holds at a graph break) as a template over graph outputs and inputs,
with the views, copies and in-place updates of inputs that eager would make."""
from collections import OrderedDict, defaultdict, deque

import torch

from ..ops import TensorVar
from .values import is_constant, is_namedtuple


def _flatten_output(out, graph, fail, tracer=None):
    """Returns (template, output nodes). Template leaves: ('o', k) graph output k; ('oc', k) a copy of graph
    output k (another tensor with the same value); ('i', j, fresh) graph input j (a copy when fresh);
    ('vi', j, size, stride, offset) a view of graph input j (offset counted from its storage offset), as
    eager's view of that input; ('vo', k, size, stride, offset) a view of graph output k (when the base
    of views is returned or several views of it are); ('det', leaf) the leaf detached from autograd;
    ('obj', cls, [(attr, ...)]) and ('dobj', cls, [(key, ...)], [(attr, ...)]) a new instance of a class
    (a dict subclass) with these attributes (and items); ('c', value) a constant or a real object the frame holds; ('src', path) the object at a source path
    (re-read); containers ('t'|'l', [...]),
    ('d', [(key, ...)]).
    With inputs updated in place (tracer.mutations) or views needing a base that is not a plain graph
    output, the template is ('m', inner, writes, prep): the inner value is built first (copies of inputs
    see the values from before the call), then each (j, src, detach) of writes copies the final value
    src (('o', k), or ('i', jj) graph input jj's value from before the call) into the real input j,
    detach: without autograd. prep: dict(contig=[k: graph outputs made contiguous, bases of 'vo'],
    clones=[j: copies of inputs appended to the outputs, bases of 'vo'], spans=[bytes spanned per input],
    mutated=[j]) - inputs updated in place must not share memory with other inputs."""
    outs = []
    index = {}

    def out_index(n):
        k = index.get(n)
        if k is None:
            k = index[n] = len(outs)
            outs.append(n)
        return k

    # the tensors returned, grouped by the memory they share (views and their base)
    found, seen = [], set()

    def collect(v):
        if isinstance(v, TensorVar):
            if id(v) not in seen:
                seen.add(id(v))
                found.append(v)
        elif type(v) in (tuple, list) or is_namedtuple(v) or type(v).__module__ == "torch.return_types":
            for x in v:
                collect(x)
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif _is_made_object(v, tracer):
            for x in vars(v).values():
                collect(x)
    collect(out)
    members = {}
    for v in found:
        st = _storage_of(v)
        if st is not None and st.input_index is None:
            members.setdefault(st, []).append(v)
    # a base several returned tensors view, or the memory of a tensor dyn laid out (channels_last): a graph
    # output the returned tensors are views of
    shared = [st for st, vs in members.items() if len(vs) > 1 or st.laid_out]
    bases, claimed, contig, clones = {}, {}, [], []
    n_clones = sum(1 for st in shared if st.node.op == "input")
    for st in shared:
        if any(v.view is not None and not v.view.exact for v in members[st]):
            fail("returning a tensor together with a view of it made by reshape/flatten/contiguous (eager "
                 "makes a view or a copy depending on a layout dyn does not model)")
        if st.node.op == "input":  # a copy of an input (clone) views were taken of: a copy made per call
            bases[st] = len(clones) - n_clones  # counted from the end of the extended outputs
            clones.append(st.node.index)
        else:
            bases[st] = out_index(st.node)
            claimed[st.node] = st
            contig.append(bases[st])

    def plain(v):
        n = v.node
        if n.op == "input":
            return ("i", n.index, True)  # not the input itself: a copy of its value
        owner = claimed.get(n)
        if owner is None:
            claimed[n] = v
        elif owner is not v:
            return ("oc", out_index(n))
        return ("o", out_index(n))

    def leaf(v):
        info = v.view
        if info is not None:
            st = info.storage
            s = info.shadow
            if st.input_index is not None:
                if not info.exact:
                    fail("returning a view of an input dyn cannot lay out")
                return ("vi", st.input_index, tuple(s.shape), tuple(s.stride()), s.storage_offset())
            if st in bases:
                return ("vo", bases[st], tuple(s.shape), tuple(s.stride()), s.storage_offset())
            return plain(v)
        if v.input_index is not None:
            return ("i", v.input_index, False)
        if v.alias is not None and v.alias in bases:
            return ("o", bases[v.alias])
        return plain(v)

    def walk(v):
        if isinstance(v, TensorVar):
            r = leaf(v)
            if v.view is not None and any(step[0] == "detach" for step in v.view.steps):
                r = ("det", r)
            return r
        if isinstance(v, tuple) and type(v) is tuple:
            return ("t", [walk(x) for x in v])
        if is_namedtuple(v):
            return ("nt", type(v), [walk(x) for x in v])
        if type(v).__module__ == "torch.return_types":  # a structseq (max(dim), sort, ...): made from a tuple
            return ("st", type(v), [walk(x) for x in v])
        if _is_made_object(v, tracer):  # a user object (a dataclass) made by the traced code
            if isinstance(v, dict):  # a dict subclass (transformers' ModelOutput): its items and attributes
                attrs = vars(v)  # an item that is also an attribute (ModelOutput's fields) is one object
                return ("dobj", type(v), [(k, ("attr", k) if k in attrs and attrs[k] is x else walk(x))
                                          for k, x in v.items()], [(k, walk(x)) for k, x in attrs.items()])
            return ("obj", type(v), [(k, walk(x)) for k, x in vars(v).items()])
        src = tracer.sources.get(id(v)) if tracer is not None and type(v) is not tuple else None
        if src is not None:  # an object (or a real list or dict) reached from the arguments: itself
            return ("src", src)
        if isinstance(v, list):
            return ("l", [walk(x) for x in v])
        if type(v) is deque:  # rebuilt with its maxlen
            return ("dq", v.maxlen, [walk(x) for x in v])
        if type(v) in (set, frozenset):  # rebuilt from its items (tensors hash by identity, as in eager)
            return ("set", type(v), [walk(x) for x in v])
        if isinstance(v, dict) and all(is_constant(k) for k in v):
            items = [(k, walk(x)) for k, x in v.items()]
            if type(v) in (OrderedDict, defaultdict):  # rebuilt as its own type (a defaultdict's factory too)
                return ("dt", type(v), getattr(v, "default_factory", None), items)
            return ("d", items)
        if is_constant(v):
            return ("c", v)
        if tracer is not None and _real_object(v, tracer):
            return ("c", v)  # a real object the frame holds (a function, a class, a module), guarded
        fail(f"returning a {type(v).__name__}")

    tmpl = walk(out)
    writes = []
    mutations = getattr(tracer, "mutations", None) or {}
    for j, v in mutations.items():
        n = v.node
        if n.op == "input":
            if n.index != j:
                writes.append((j, ("i", n.index), j not in tracer.grad_mutations))
        else:
            writes.append((j, ("o", out_index(n)), j not in tracer.grad_mutations))
    graph.updates = _in_place_candidates(tmpl, writes, clones, graph)
    if not writes and not contig and not clones:
        return tmpl, outs
    spans, mutated = [], [j for j, _, _ in writes]
    if writes:
        spans = [_span(t) for t in tracer.input_tensors]
        tracer.mutation_spans = (spans, mutated)
        if _memory_conflict(tracer.input_tensors, spans, mutated):
            fail("in-place update of an input that shares memory with another input")
        if any(j in mutated for _, j in getattr(tracer, "input_aliases", ())):
            fail("in-place update of an input the frame reaches through several arguments or attributes")
    return ("m", tmpl, writes, dict(contig=contig, clones=clones, spans=spans, mutated=mutated)), outs


def _in_place_candidates(tmpl, writes, clones, graph):
    """{graph output k: the input node it updates} for the updates the compiled code may write straight
    into their input (docs/pipeline.md): not where the runner reads the input's value from before the
    call after the graph ran (a copy of it returned, a clone for views, another update's source), nor an
    output the frame also returns or hands on (it would be the input object itself)."""
    old_inputs = set(clones) | {src[1] for _, src, _ in writes if src[0] == "i"}
    used_outputs = set()

    def walk(t):
        if type(t) is tuple and t and t[0] in ("c", "src"):
            return
        if type(t) is tuple and len(t) == 3 and t[0] == "i" and t[2] is True:
            old_inputs.add(t[1])
        elif type(t) is tuple and len(t) >= 2 and t[0] in ("o", "oc", "vo") and type(t[1]) is int:
            used_outputs.add(t[1])
        if type(t) in (tuple, list):
            for x in t:
                walk(x)
    walk(tmpl)
    return {src[1]: graph.inputs[j] for j, src, _ in writes
            if src[0] == "o" and j not in old_inputs and src[1] not in used_outputs}


def _is_made_object(v, tracer):
    """An instance of a plain user class that the traced code constructed (Frame.instantiate)."""
    return tracer is not None and type(v) in tracer.created_classes and id(v) in tracer.created


def _real_object(v, tracer):
    """A real object the traced code holds as it is (not a value standing for others while capturing, not
    a container or iterator it made)."""
    t = type(v)
    return id(v) not in tracer.created and not isinstance(v, (list, dict, set, tuple, torch.Tensor)) and \
        not hasattr(t, "__next__") and not (t.__module__ or "").startswith("dyn.") and t.__name__ != "_Null"


def _storage_of(v):
    return v.view.storage if v.view is not None else v.alias


def _span(t):
    """Bytes from the first to past the last element of t (0 when empty)."""
    if t.numel() == 0:
        return 0
    return (sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()


def _memory_conflict(ins, spans, mutated):
    """Whether an input in `mutated` overlaps (by address range) another input."""
    mut = set(mutated)
    iv = sorted((ins[i].data_ptr(), ins[i].data_ptr() + n, i) for i, n in enumerate(spans) if n)
    for a in range(len(iv)):
        start, end, i = iv[a]
        for b in range(a + 1, len(iv)):
            s2, e2, i2 = iv[b]
            if s2 >= end:
                break
            if i in mut or i2 in mut:
                return True
    return False


def conflict_free(spans, mutated):
    """check(ins) -> whether no input in `mutated` overlaps another, as _memory_conflict decides for inputs of
    these spans (bytes; the entry's guards fix the sizes and strides), at less cost per call: the addresses of
    the last call that passed are kept, and only the inputs that moved since are checked (a batch moves, a
    module's parameters and buffers stay)."""
    mut, everyone = frozenset(mutated), range(len(spans))
    last = None

    def check(ins):
        nonlocal last
        ptrs = [t.data_ptr() for t in ins]
        if last is None:
            if _memory_conflict(ins, spans, mutated):
                return False
        else:
            for i, (p, q) in enumerate(zip(ptrs, last)):
                if p == q or not spans[i]:
                    continue
                end = p + spans[i]
                for o in (everyone if i in mut else mut):
                    if o != i and spans[o] and ptrs[o] < end and p < ptrs[o] + spans[o]:
                        return False
        last = ptrs
        return True
    return check
