"""The README's code snippets are the code that builds and runs.

usage: readme_snippets.py README.md

Each `<!-- snippet: FILE -->` line in the README is followed by a fenced code block that must equal, line for
line, the part of FILE (relative to the README's folder) between the lines `// README: ...` and
`// README: end`. The file itself is built and run by ctest, so the README shows code that works.
"""
import os
import re
import sys


def main():
    readme = sys.argv[1]
    text = open(readme).read()
    root = os.path.dirname(os.path.abspath(readme))
    problems = []
    snippets = re.findall(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```", text, re.S)
    if not snippets:
        problems.append("no snippets found")
    for path, shown in snippets:
        source = open(os.path.join(root, path)).read()
        found = re.search(r"// README: [^\n]*\n(.*?)// README: end", source, re.S)
        if not found:
            problems.append(f"{path}: no '// README:' block")
        elif found.group(1) != shown:
            problems.append(f"{path}: the README's snippet differs from the file")
    for problem in problems:
        print(problem)
    print(f"{len(snippets)} snippets checked" if not problems else "FAILED")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
