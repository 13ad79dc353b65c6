# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a job failed, told one way: each failure kind's events and the end of its failing task's log.

A failed or abnormal job's failure is ``{task, exit_code, message}`` (the scenario's ``failure``, or the defaults
below); :func:`kind` reads which of these stories it is, from the message, the exit code and whether the job ran:

==============  =====================================================  ============================================
kind            when                                                    the failing task's log ends with
==============  =====================================================  ============================================
not_started     the job never ran (image pull, pod creation)            no log at all: nothing ran
node_lost       the node went away (``Node lost``, ``evicted``,         the training lines, cut off: no end line
                ``NotReady``)
exception       the message names a Python exception                    a traceback that fits it (an import in the
                (``ModuleNotFoundError: ...``, ``RuntimeError: ...``)   evaluation, a CUDA error in the forward pass,
                                                                        a ``raise`` in the training loop), the
                                                                        exception, the return code
oom_killed      exit code 137, or out of memory (``OOMKilled``)         the shell's ``Killed`` line, the return code
signal          another exit code above 128 (139: a segfault)           the message as the shell prints it, the
                                                                        return code
exited          anything else                                           ``ERROR: <message>``, the return code
==============  =====================================================  ============================================

Events: a warning where something was seen coming (GPU memory for a CUDA out-of-memory error, the container's
memory for ``oom_killed``, the node for ``node_lost``), an error naming the task - how it ended, with its exit code
when it had a process that exited - and the job's own ``Failed to run the training job.``.
"""

import re

# Defaults of a failed/abnormal/terminated job's worker, unless the scenario says otherwise.
DEFAULT_FAILURE = {
    "Failed": {"exit_code": 1, "message": "RuntimeError: training diverged: loss is NaN"},
    "Abnormal": {"exit_code": -1, "message": "Pod worker-0 was evicted: the node became NotReady"},
    "Terminated": {"exit_code": 143, "message": "Terminated by user request"},
}
# An abnormal job that never ran.
NOT_STARTED_MESSAGE = "Failed to create pod worker-0: insufficient resources in the resource pool"

KINDS = ("not_started", "node_lost", "exception", "oom_killed", "signal", "exited")
_EXCEPTION = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit))(?::\s*(.*))?$", re.S)
_NODE_LOST = re.compile(r"node lost|evicted|notready", re.I)
_OUT_OF_MEMORY = re.compile(r"oomkilled|out of memory", re.I)

CODE = "/home/ma-user/modelarts/user-job-dir/code/train.py"
TORCH = "/home/ma-user/anaconda3/lib/python3.9/site-packages/torch/nn/modules"
LAUNCHER = "/home/ma-user/modelarts/run/run_train.sh: line 12:    87"
COMMAND = "python %s --data_url=/home/ma-user/modelarts/inputs/data_url_0" % CODE
# The exception's traceback, by what raised it: an import the evaluation makes, the forward pass on the GPU, or the
# training loop's own check.
_IMPORT_FRAMES = (
    "Traceback (most recent call last):",
    '  File "%s", line 212, in <module>' % CODE,
    "    main()",
    '  File "%s", line 196, in main' % CODE,
    "    metrics = evaluate(model, val_loader)",
    '  File "%s", line 141, in evaluate' % CODE,
)
_FORWARD_FRAMES = (
    "Traceback (most recent call last):",
    '  File "%s", line 212, in <module>' % CODE,
    "    main()",
    '  File "%s", line 188, in main' % CODE,
    "    loss = criterion(model(images), labels)",
    '  File "%s/module.py", line 1501, in _call_impl' % TORCH,
    "    return forward_call(*args, **kwargs)",
    '  File "%s/conv.py", line 463, in forward' % TORCH,
    "    return self._conv_forward(input, self.weight, self.bias)",
)
_LOOP_FRAMES = (
    "Traceback (most recent call last):",
    '  File "%s", line 212, in <module>' % CODE,
    "    main()",
    '  File "%s", line 190, in main' % CODE,
    "    train_one_epoch(model, train_loader, optimizer)",
    '  File "%s", line 117, in train_one_epoch' % CODE,
)


def kind(failure, ran):
    """Which story ``failure`` (``{exit_code, message}``) tells, one of :data:`KINDS`; ``ran``: whether the job ran."""
    message = str(failure.get("message") or "")
    code = failure.get("exit_code")
    if not ran:
        return "not_started"
    if _NODE_LOST.search(message):
        return "node_lost"
    if _EXCEPTION.match(message):
        return "exception"
    if code == 137 or _OUT_OF_MEMORY.search(message):
        return "oom_killed"
    if isinstance(code, int) and code > 128:
        return "signal"
    return "exited"


def _cuda(message):
    return "CUDA" in message or message.startswith("torch.cuda.")


def events(failure, ended, since=0):
    """The events of the failure, ``ended`` being when the job entered its phase (epoch ms) and ``since`` the job's last
    event before it (none of these comes earlier): ``{ms, level, message, source}``."""
    task, code, message = failure["task"], failure["exit_code"], str(failure["message"])
    story = failure["kind"]
    found = []
    if story == "oom_killed":
        found.append((2000, "Warning", "[%s] Memory usage above 95%% of the container's limit for 60 seconds." % task))
    elif story == "exception" and _cuda(message) and _OUT_OF_MEMORY.search(message):
        found.append((2000, "Warning", "[%s] GPU memory usage above 95%% for 60 seconds." % task))
    elif story == "node_lost":
        found.append((2000, "Warning", "[%s] The node running this task stopped responding." % task))
    if story == "not_started":
        found.append((1000, "Error", "[%s] %s" % (task, message)))
    elif story == "node_lost":
        found.append((1000, "Error", "[%s] Task lost with its node (exit code %s): %s" % (task, code, message)))
    else:
        found.append((1000, "Error", "[%s] Training process exited with code %s: %s" % (task, code, message)))
    found.append((0, "Error", "Failed to run the training job."))
    return [
        {"ms": max(ended - before, since), "level": level, "message": text, "source": "Task" if text.startswith("[") else "Job"}
        for before, level, text in found
    ]


def _import_line(message):
    """The import statement an ``ImportError``'s message says failed."""
    named = re.search(r"No module named '([\w.]+)'", message)
    if named:
        return "    import %s" % named.group(1)
    name = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", message)
    if name:
        return "    from %s import %s" % (name.group(2), name.group(1))
    return "    from evaluation import metrics"


def log_end(failure):
    """The last lines of the failing task's log (after its training lines); None for a task that never ran."""
    code, message = failure["exit_code"], str(failure["message"])
    story = failure["kind"]
    end = "[ModelArts Service Log]Training end with return code: %s" % code
    if story == "not_started":
        return None
    if story == "node_lost":
        # The node went away with the process: the log stops where it was, with no last word.
        return []
    if story == "exception":
        exception, text = _EXCEPTION.match(message).group(1, 2)
        if exception.endswith(("ModuleNotFoundError", "ImportError")):
            frames = _IMPORT_FRAMES + (_import_line(message),)
        elif _cuda(message):
            frames = _FORWARD_FRAMES
        else:
            frames = _LOOP_FRAMES + ("    raise %s(%r)" % (exception.rpartition(".")[2], text or ""),)
        return list(frames) + [message, end]
    if story == "oom_killed":
        return ["%s Killed                  %s" % (LAUNCHER, COMMAND), end]
    if story == "signal":
        return ["%s %s                  %s" % (LAUNCHER, message, COMMAND), end]
    return ["ERROR: %s" % message, end]
