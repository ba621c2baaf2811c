"""Report folders and their locks keep what the user made (found by an adversarial review; each test failed on
the code before the fix)."""
from __future__ import annotations

import os
import stat

import pytest

from numerics.io import folder_lock
from theorems import InvalidArgument


@pytest.mark.parametrize("content", ["42\n", "12345\n"])
def test_a_users_lock_named_file_with_digits_is_refused_and_kept(tmp_path, content):
    """A file ``.rep.lock`` the user wrote (digits only) was taken for softpolar's lock and deleted on exit."""
    lock = tmp_path / ".rep.lock"
    lock.write_text(content)
    with pytest.raises(InvalidArgument, match="not written by softpolar"):
        with folder_lock(tmp_path / "rep"):
            pass
    assert lock.read_text() == content


def test_an_empty_lock_named_file_is_used_and_left_empty(tmp_path):
    lock = tmp_path / ".rep.lock"
    lock.write_text("")
    with folder_lock(tmp_path / "rep"):
        assert lock.read_text().startswith("softpolar lock, pid ")
    assert lock.exists() and lock.read_text() == ""


def test_our_own_lock_is_removed_and_a_stale_one_reused(tmp_path):
    lock = tmp_path / ".rep.lock"
    with folder_lock(tmp_path / "rep"):
        assert lock.read_text() == f"softpolar lock, pid {os.getpid()}\n"
    assert not lock.exists()
    lock.write_text("softpolar lock, pid 999999\n")  # left by a killed run: holds no flock
    with folder_lock(tmp_path / "rep"):
        pass
    assert not lock.exists()


def test_an_empty_private_out_folder_keeps_its_permissions(tmp_path):
    """verify replaced an empty --out folder with a fresh one of default permissions (700 became 755)."""
    from proofs_check.cli import main

    out = tmp_path / "priv"
    out.mkdir()
    os.chmod(out, 0o700)
    rc = main(["verify", "--claims", "C04", "--jobs", "1", "--out", str(out)])
    assert rc == 0
    assert (out / "report.json").exists()
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
