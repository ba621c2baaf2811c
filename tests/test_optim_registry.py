"""User optimizers are registered in a scope (theorems.optimizers.optimizer_scope): one in-process softpolar run's
--models optimizer does not leak into the next, and the public functions keep working outside any scope."""
import textwrap

import pytest

from softpolar import main
from theorems import optimizers as O

MODELS = """
from theorems.optimizers import Optimizer, g, lr, theta
heavy = Optimizer("heavy-optlaw", flow={theta: -%s * g}, step=[(theta, theta - lr * %s * g)])
"""


def _models(tmp_path, name, factor):
    path = tmp_path / name
    path.write_text(textwrap.dedent(MODELS % (factor, factor)))
    return str(path)


def test_one_verify_runs_optimizer_does_not_leak_into_the_next(tmp_path, capsys):
    first = _models(tmp_path, "heavy2.py", 2)
    claim = "OPTF.winner[heavy-optlaw,logistic,softmax]"
    rc = main(["verify", "--models", first, "--optimizer", "heavy-optlaw", "--claims", claim, "--out",
               str(tmp_path / "one")])
    out = capsys.readouterr()
    assert rc in (0, 1) and claim in out.out, out.err  # ran (its verdict is not the point here)
    assert "heavy-optlaw" not in O.all_optimizers()  # gone once the run is over
    # the next run without --models does not know it: one line, exit 2
    rc = main(["verify", "--optimizer", "heavy-optlaw", "--claims", claim, "--out", str(tmp_path / "two")])
    err = capsys.readouterr().err
    assert rc == 2 and "optimizer='heavy-optlaw' is not allowed" in err and len(err.strip().splitlines()) == 1
    # and another run may define the name anew (one name, one definition within a run, not within the process)
    rc = main(["derive", "--optimizer", "heavy-optlaw", "--models", _models(tmp_path, "heavy3.py", 3)])
    out = capsys.readouterr().out
    assert rc == 0 and "-3*g" in out, out


def test_scopes_nest_and_refuse_a_second_definition_under_a_parents_name():
    a = O.Optimizer("scoped-a-optlaw", flow={O.theta: -2 * O.g}, step=[(O.theta, O.theta - O.lr * O.g)])
    a2 = O.Optimizer("scoped-a-optlaw", flow={O.theta: -3 * O.g}, step=[(O.theta, O.theta - O.lr * O.g)])
    with O.optimizer_scope() as outer:
        O.register_optimizer(a)
        with O.optimizer_scope() as inner:
            assert inner.parent is outer and O.get_optimizer("scoped-a-optlaw") is a
            with pytest.raises(O.InvalidArgument, match="already registered"):
                O.register_optimizer(a2)
        assert O.current_registry() is outer
    assert "scoped-a-optlaw" not in O.all_optimizers()
    # a registry passed explicitly, no scope entered
    reg = O.OptimizerRegistry()
    O.register_optimizer(a2, reg)
    assert O.get_optimizer("scoped-a-optlaw", reg) is a2 and "scoped-a-optlaw" not in O.all_optimizers()
    with pytest.raises(O.InvalidArgument, match="registry="):
        O.all_optimizers(registry={})


LINK_MODELS = """
import sympy as sp
from theorems import Link, Loss
x = sp.Symbol("x", real=True)
z = sp.Symbol("z", real=True)
hot = Link("scoped-hot-link", h=sp.exp(%s * x))
steep = Loss.margin("scoped-steep-loss", ell=sp.exp(-2 * z))
"""


def test_one_runs_links_and_losses_do_not_leak_into_the_next(tmp_path, capsys):
    """User links and losses live in the run's scope (theorems.models_scope), as its optimizers do."""
    import theorems
    path = tmp_path / "hot.py"
    path.write_text(LINK_MODELS % 2)
    args = ["derive", "--link", "scoped-hot-link", "--loss", "scoped-steep-loss", "--asymptotics"]
    assert main([*args, "--models", str(path)]) == 0
    capsys.readouterr()
    assert "scoped-hot-link" not in theorems.all_links() and "scoped-steep-loss" not in theorems.all_losses()
    assert main(args) == 2  # the next run without --models does not know them: one line, exit 2
    err = capsys.readouterr().err
    assert "='scoped-" in err and "is not allowed" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--models", str(path)]) == 0  # the same definitions again: fine
    capsys.readouterr()
    # another definition under the name: refused, in any scope (numerics' kernel caches are keyed by names)
    other = tmp_path / "hotter.py"
    other.write_text(LINK_MODELS % 3)
    assert main([*args, "--models", str(other)]) == 2
    assert "already registered with another definition" in capsys.readouterr().err
    with theorems.models_scope():  # a scope in code: registered inside, gone after
        theorems.register(theorems.Link("scoped-code-link", h=theorems.get_link("softmax").h(2 * x)))
        assert theorems.get_link("scoped-code-link").name == "scoped-code-link"
    assert "scoped-code-link" not in theorems.all_links()


x = __import__("sympy").Symbol("x", real=True)
