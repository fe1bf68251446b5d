"""A unit's graph and code are parsed once even when a background worker and the UI thread ask for
them at the same moment: views match nodes and kernels by identity, and a second parse left the
Graph tab waiting forever for a graph that was never the one the unit held (a CI failure)."""

import threading

from inspector.core.model.session import CodeArtifact, GraphArtifact, LazySpans

GRAPH = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4]"):
        l_x_ = L_x_
        sin: "f32[4]" = torch.sin(l_x_);  l_x_ = None
        return (sin,)
"""


def asked_by_two_threads(make_loader, get):
    """What two threads got from `get(owner)`, and how often the owner's loader ran. The loader waits
    (up to 0.5 s) for the other thread to enter it too: without a lock both do, and each parses."""
    entered, both_in = [], threading.Event()

    def load():
        entered.append(threading.get_ident())
        if len(entered) == 2:
            both_in.set()
        both_in.wait(0.5)
        return GRAPH

    owner = make_loader(load)
    got = [None, None]

    def ask(i):
        got[i] = get(owner)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return got, len(entered)


def test_a_graph_asked_for_by_two_threads_is_one_graph():
    (a, b), loads = asked_by_two_threads(lambda load: GraphArtifact("dynamo", load), lambda artifact: artifact.graph)
    assert loads == 1 and a is b and [node.name for node in a.op_nodes] == ["sin"]


def test_output_code_asked_for_by_two_threads_is_one_parse():
    (a, b), loads = asked_by_two_threads(lambda load: CodeArtifact(None, load), lambda artifact: artifact.code)
    assert loads == 1 and a is b


def test_a_span_forest_asked_for_by_two_threads_is_built_once():
    def spans(load):
        return LazySpans(lambda: (load() and {}, [], {}))

    (a, b), loads = asked_by_two_threads(spans, lambda source: source.unowned)
    assert loads == 1 and a is b
