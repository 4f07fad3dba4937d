"""``jax._src.traceback_util``: libraries register their files as not user code and mark
API boundaries. numjax does not filter tracebacks, so these only record what they are told
(``include_frame`` answers from the recorded exclusions)."""
import functools
import os

_exclude_paths = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]   # numjax itself


def register_exclusion(path):
    _exclude_paths.append(path)


def include_filename(filename):
    return not any(filename.startswith(p) for p in _exclude_paths)


def include_frame(frame):
    return include_filename(frame.f_code.co_filename)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    if fun is None:
        return functools.partial(api_boundary, repro_api_name=repro_api_name,
                                 repro_user_func=repro_user_func)
    return fun
