"""Options shared by several commands, declared once."""
from __future__ import annotations

import functools
import math
import re

import click

from agrad.cli.app import App


def _set_debug(ctx: click.Context, _param, value: bool) -> bool:
    if value:
        ctx.ensure_object(App).debug = True
    return value


debug_option = click.option(
    "--debug", is_flag=True, expose_value=False, callback=_set_debug, is_eager=True,
    help="Show Python tracebacks (for reporting bugs in agrad or in a plugin).")

plugin_option = click.option(
    "--plugin", "plugins", multiple=True, metavar="FILE.py",
    type=click.Path(exists=True, dir_okay=False, resolve_path=False),
    help="Import FILE.py first so the graph can use the ops it registers (repeatable).")


def _set_sandbox(ctx: click.Context, _param, value: bool) -> bool:
    ctx.ensure_object(App).sandbox = value
    return value


sandbox_option = click.option(
    "--sandbox", is_flag=True, expose_value=False, callback=_set_sandbox, envvar="AGRAD_SANDBOX",
    help="Refuse data files (file: inputs, train data) outside the graph's folder: `..`, absolute paths, "
         "symlinks out. For graphs from untrusted sources, e.g. CI on pull requests. Default: off, or "
         "AGRAD_SANDBOX=1.")


def graph_reading(command):
    """`--plugin`, `--debug` and `--sandbox`, which every command that reads graph files takes (SPEC §2)."""
    return plugin_option(debug_option(sandbox_option(command)))


def _set_format(ctx: click.Context, _param, value: str) -> str:
    ctx.ensure_object(App).output_format = value
    return value


def format_option(*choices: str):
    return click.option("--format", "output_format", type=click.Choice(choices), default=choices[0],
                        show_default=True, callback=_set_format, help="How to print the result.")


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that also refuses nan and inf, which every bound lets through
    (`nan <= 0` is false): `--eps nan` is bad usage, not a check that passes."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class DeviceType(click.ParamType):
    """`cpu`, `cuda`, `cuda:N` or `dask`: a typo is bad usage (exit 2), not a runtime failure."""
    name = "device"
    _pattern = re.compile(r"^(cpu|cuda(:\d+)?|dask)$")

    def convert(self, value, param, ctx):
        if self._pattern.match(value):
            return value
        from agrad.graphs.pytorch_habits import device_hint

        hint = device_hint(value)
        self.fail(f"{value!r} is not a device; " + (f"did you mean '{hint}'? " if hint else "")
                  + "expected cpu, cuda, cuda:N or dask", param, ctx)


class InputReplacement(click.ParamType):
    """`NAME=FILE` for `--input`: replaces an input's data with a .npy/.npz file (`FILE.npz:KEY` names
    the array, as `--save` writes them: `grads/W`)."""
    name = "NAME=FILE"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            self.fail(f"{value!r} is not NAME=FILE (for example --input x=data/x.npy)", param, ctx)
        return name, path


DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")


# ---- --workers / --cluster: the same options on check, test and train (graphs/distributed) ----

def _cluster_request(workers, address, tls_ca_file, tls_cert, tls_key):
    """The cluster a command was asked to run on, or None: then nothing about dask is imported."""
    tls = {"--tls-ca-file": tls_ca_file, "--tls-cert": tls_cert, "--tls-key": tls_key}
    if workers is not None and address is not None:
        raise click.UsageError("give --workers N (a local cluster) or --cluster ADDRESS (a running one), not both")
    if address is not None:
        scheme = address.partition("://")[0] if "://" in address else "tcp"
        if scheme not in ("tcp", "tls"):
            raise click.BadParameter(f"{address!r}: expected tcp://HOST:PORT or tls://HOST:PORT",
                                     param_hint="--cluster")
        if scheme == "tcp" and any(tls.values()):
            given = next(name for name, value in tls.items() if value)
            raise click.UsageError(f"{given} is for a tls:// scheduler; --cluster {address} is not one")
    elif any(tls.values()):
        raise click.UsageError("--tls-ca-file, --tls-cert and --tls-key go with --cluster tls://HOST:PORT")
    if workers is None and address is None:
        return None
    from agrad.graphs.distributed.cluster import ClusterOptions

    return ClusterOptions(workers=workers, address=address, tls_ca_file=tls_ca_file, tls_cert=tls_cert,
                          tls_key=tls_key)


def cluster_options(command):
    """`--workers N`, `--cluster ADDRESS` and dask's TLS files, passed to the command as one
    `cluster` argument (None unless asked for)."""
    @functools.wraps(command)
    def with_cluster(*args, workers, cluster_address, tls_ca_file, tls_cert, tls_key, **kwargs):
        kwargs["cluster"] = _cluster_request(workers, cluster_address, tls_ca_file, tls_cert, tls_key)
        return command(*args, **kwargs)

    tls_file = click.Path(exists=True, dir_okay=False)
    for option in reversed([
        click.option("--workers", type=click.IntRange(min=1), metavar="N",
                     help="Run on a local dask cluster of N worker processes on 127.0.0.1 (needs agrad[dask])."),
        click.option("--cluster", "cluster_address", metavar="ADDRESS",
                     help="Run on a running dask scheduler: tcp://HOST:PORT or tls://HOST:PORT (needs agrad[dask]; "
                          "the workers need agrad installed)."),
        click.option("--tls-ca-file", type=tls_file, metavar="FILE", help="CA certificate of a tls:// cluster."),
        click.option("--tls-cert", type=tls_file, metavar="FILE", help="Client certificate for a tls:// cluster."),
        click.option("--tls-key", type=tls_file, metavar="FILE", help="Client private key for a tls:// cluster."),
    ]):
        with_cluster = option(with_cluster)
    return with_cluster
