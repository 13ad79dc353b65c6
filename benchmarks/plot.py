# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fan-out plot: task wall time against the number of jobs, one module task vs a ``uri`` loop."""


def _points(series, prefix):
    sizes = sorted(int(key.split("|")[2]) for key in series if key.startswith(prefix))
    summaries = [series["%s%d" % (prefix, size)]["summary"] for size in sizes]
    return sizes, summaries


def fanout_png(playbooks, path, title_note="", playbooks_full=None):
    """Write the PNG to ``path``; return False when matplotlib is missing or there is no fan-out data.

    ``playbooks`` holds the bulk documents' results, ``playbooks_full`` (optional) the full-size
    documents' results, drawn with dashed lines; either may be None.
    """
    try:
        import matplotlib  # pylint: disable=import-outside-toplevel

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
    except ImportError:
        return False
    sets = [
        (label, data, style)
        for label, data, style in (("6.2 KB docs", playbooks, "-"), ("12.6 KB docs", playbooks_full, "--"))
        if data and any(key.startswith("fanout|module_token|") for key in data["series"]) and any(key.startswith("fanout|uri|") for key in data["series"])
    ]
    if not sets:
        return False
    figure, axes = plt.subplots(figsize=(7.5, 4.8), dpi=110)

    def draw(sizes, summaries, label, style, color):
        medians = [s["median"] for s in summaries]
        lower = [s["median"] - s["min"] for s in summaries]
        upper = [s["max"] - s["median"] for s in summaries]
        axes.errorbar(sizes, medians, yerr=[lower, upper], fmt=style, color=color, capsize=3, label=label)

    ticks = set()
    for offset, (docs, data, line) in enumerate(sets):
        series = data["series"]
        module_sizes, module = _points(series, "fanout|module_token|")
        uri_sizes, uri = _points(series, "fanout|uri|")
        ticks |= set(module_sizes) | set(uri_sizes)
        draw(module_sizes, module, "module, one task (auth_token), %s" % docs, "o" + line, "tab:blue")
        aksk_key = "fanout|module_aksk|%d" % max(module_sizes)
        if aksk_key in series:
            aksk = series[aksk_key]["summary"]
            axes.errorbar(
                [max(module_sizes)],
                [aksk["median"]],
                yerr=[[aksk["median"] - aksk["min"]], [aksk["max"] - aksk["median"]]],
                fmt="s",
                color="tab:green",
                capsize=3,
                label="module, one task (AK/SK), %s" % docs,
            )
        draw(uri_sizes, uri, "ansible.builtin.uri, loop (X-Auth-Token), %s" % docs, "o" + line, "tab:red")
        fit = data.get("uri_fit")
        if fit and max(module_sizes) > max(uri_sizes):
            xs = [max(uri_sizes), max(module_sizes)]
            axes.plot(
                xs,
                [fit["intercept"]["median"] + fit["slope"]["median"] * x for x in xs],
                ":",
                color="tab:red",
                label="uri loop, linear extrapolation, %s" % docs,
            )
        size = max(module_sizes)
        key = "fanout_uri_vs_module_token_%d" % size
        ratio = data["ratios"].get(key) or data["ratios"].get(key + "_extrapolated")
        if ratio:
            axes.annotate(
                "uri loop / module, %s: %.0fx" % (docs, ratio["median"]),
                xy=(size, series["fanout|module_token|%d" % size]["summary"]["median"]),
                xytext=(-170, 30 + 22 * offset),
                textcoords="offset points",
                arrowprops={"arrowstyle": "-"},
                fontsize=8,
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    ticks = sorted(ticks)
    axes.set_xticks(ticks)
    axes.set_xticklabels([str(tick) for tick in ticks])
    axes.minorticks_off()
    axes.set_xlabel("training jobs read in one task")
    axes.set_ylabel("task wall time, seconds (median, min-max)")
    axes.set_title("Fan-out: one module task vs a uri loop%s" % title_note, fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return True
