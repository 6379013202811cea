"""Writes (--write) or checks (--check) the committed outputs of dyn-tblgen: python/dyn/_ops_generated.py and
the op list of docs/ops.md (between the `generated op list` markers), from the files the build generated.
Usage: update_generated.py --write|--check GENERATED_PY GENERATED_MD SOURCE_ROOT"""
import os
import sys

BEGIN = "<!-- BEGIN generated op list -->\n"
END = "<!-- END generated op list -->\n"


def spliced(doc, section):
    if BEGIN not in doc or END not in doc:
        raise SystemExit("docs/ops.md has no generated op list markers")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + section + END + tail


def main(mode, gen_py, gen_md, root):
    targets = {os.path.join(root, "python", "dyn", "_ops_generated.py"): open(gen_py).read()}
    doc_path = os.path.join(root, "docs", "ops.md")
    targets[doc_path] = spliced(open(doc_path).read(), open(gen_md).read())
    stale = []
    for path, text in targets.items():
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if mode == "--write":
            with open(path, "w") as f:
                f.write(text)
            print(f"updated {os.path.relpath(path, root)}")
        else:
            stale.append(os.path.relpath(path, root))
    if stale:
        print("out of date with the op registry (run `ninja -C build dyn-update-generated`): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
