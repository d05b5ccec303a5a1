"""PyTorch's pickled graph data: torch.cuda.graphs.export_graph_data(path)
registers a hook that writes pickle.dump(CUDAGraph.get_graph_data()), a dict
of plain data. Read here with an unpickler that refuses every class, so a
pickle from elsewhere cannot run code: only dicts, lists, str, int, float,
bool and None come back."""
from __future__ import annotations

import pickle
from typing import Any, Dict

from ._errors import DocumentError, InputNotFoundError, InputPermissionError

# Protocol 2 and later begin with PROTO (0x80) and the protocol number.
_PROTOCOLS = range(2, 6)


def is_pickle(path: str) -> bool:
    """Whether the file at path begins as a pickle of protocol 2 or later."""
    try:
        with open(path, "rb") as f:
            head = f.read(2)
    except OSError:
        return False
    return len(head) == 2 and head[0] == 0x80 and head[1] in _PROTOCOLS


class _PlainData(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError("it holds a %s.%s object, and a get_graph_data() pickle holds plain data only"
                                     % (module, name))


def read_graph_data(path: str) -> Dict[str, Any]:
    """The dict of a get_graph_data() pickle. InputNotFoundError,
    InputPermissionError or DocumentError (code 3) naming the file."""
    try:
        with open(path, "rb") as f:
            data = _PlainData(f).load()
    except FileNotFoundError:
        raise InputNotFoundError(3, "graphscope: %s (no such file)" % path, path) from None
    except PermissionError:
        raise InputPermissionError(3, "graphscope: %s (permission denied)" % path, path) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, MemoryError) as e:
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DocumentError(3, "graphscope: %s (not a get_graph_data() pickle: %s)" % (path, why)) from None
    if not isinstance(data, dict):
        raise DocumentError(3, "graphscope: %s (not a get_graph_data() pickle: it holds a %s, not a dict)"
                            % (path, type(data).__name__))
    return data
