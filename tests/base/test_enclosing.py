"""What encloses a line, per language (:mod:`colony_tasks.base.enclosing`): Python by its parser,
TypeScript/JavaScript, Go and Rust by the nearest less-indented line that starts a definition;
nothing for another language or a line at the top level."""

from __future__ import annotations

import pytest

from colony_tasks.base.enclosing import finder

PYTHON = """import os


class Store:
    @property
    def path(self):
        return 1

    def save(self, x):
        text = '''
def not_a_function():
'''
        return text


def retry():
    pass
"""

TYPESCRIPT = """import x from "y";

export class Store {
  private items: string[] = [];

  async save(item: string): Promise<void> {
    if (item) {
      this.items.push(item);
    }
  }
}

export const retry = async (n: number) => {
  return n;
};

function plain() {
  describe("x", () => {
    it("y", () => {
      foo();
    });
  });
}
"""

GO = """package main

type Server struct {
\tname string
}

func (s *Server) Handle(w int) {
\tif w > 0 {
\t\ts.name = "x"
\t}
}
"""

RUST = """use std::fmt;

impl<T: fmt::Debug> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "x")
    }
}

pub(crate) async fn run() {
    let x = 1;
}
"""


def at(path: str, text: str, line: int) -> str:
    return finder(path, text.split("\n"))(line)


@pytest.mark.parametrize(
    ("line", "name"),
    [
        (1, ""),
        (4, "class Store"),
        (5, "def Store.path"),  # a decorator belongs to its function
        (7, "def Store.path"),
        (8, "class Store"),  # between two methods
        (11, "def Store.save"),  # "def" inside a string is not a definition
        (17, "def retry"),
    ],
)
def test_python_is_read_by_its_parser(line: int, name: str):
    assert at("pkg/core.py", PYTHON, line) == name


def test_python_that_does_not_parse_falls_back_to_indentation():
    broken = PYTHON + "def half(:\n"
    assert at("core.py", broken, 7) == "def path"
    assert at("core.py", broken, 17) == "def retry"


@pytest.mark.parametrize(
    ("line", "name"),
    [
        (1, ""),
        (4, "class Store"),
        (8, "method save"),
        (10, "class Store"),
        (12, ""),
        (14, "function retry"),
        (21, "function plain"),  # callbacks passed to calls are not definitions
    ],
)
def test_typescript_by_the_nearest_less_indented_definition(line: int, name: str):
    assert at("src/store.ts", TYPESCRIPT, line) == name
    assert at("src/store.mjs", TYPESCRIPT, line) == name


@pytest.mark.parametrize(
    ("line", "name"), [(4, "type Server"), (6, ""), (9, "func Handle"), (11, "")]
)
def test_go_by_the_nearest_less_indented_definition(line: int, name: str):
    assert at("server.go", GO, line) == name


@pytest.mark.parametrize(
    ("line", "name"),
    [(1, ""), (3, "impl Wrapper"), (5, "fn fmt"), (6, "impl Wrapper"), (10, "fn run")],
)
def test_rust_by_the_nearest_less_indented_definition(line: int, name: str):
    assert at("src/lib.rs", RUST, line) == name


def test_another_language_or_a_line_past_the_end_names_nothing():
    assert at("README.md", RUST, 5) == ""
    assert at("Makefile", PYTHON, 7) == ""
    assert at("a.d/core", PYTHON, 7) == ""  # the dot is a folder's, not an extension
    assert at("core.py", PYTHON, 500) == ""


def test_a_long_name_is_clipped():
    name = "x" * 200
    assert at("a.go", f"func {name}() {{\n\treturn\n}}\n", 2).endswith("…")
    assert len(at("a.go", f"func {name}() {{\n\treturn\n}}\n", 2)) == 40


def test_a_minified_line_is_not_read_as_a_definition():
    minified = "function a(){" + "x();" * 5000 + "}\n"
    assert at("app.min.js", minified, 1) == ""
