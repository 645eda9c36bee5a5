# Writes hostile.queries.ir.json: hand-made queries IR documents (queryIrVersion 4) over the todos table of
# demo-react.syncular.ir.json, with relation plans computed here. Run: python3 gen_hostile.py
import json, re

def occurrences(sql, table):
    out = []
    for m in re.finditer(r'"%s"|\b%s\b' % (table, table), sql):
        end = m.end()
        if end < len(sql) and sql[end] == '.':
            continue  # todos.list_id: a qualified column, not a relation
        out.append((m.start(), end))
    return out

def col(name, typ, nullable=False, lang=None):
    return {"name": name, "langName": lang or name, "type": typ, "nullable": nullable}

def q(name, sql, columns, params=(), coverage=None, aliases=None, skip=()):
    rels = []
    for i, (s, e) in enumerate(occurrences(sql, "todos")):
        if i in skip:
            continue
        r = {"table": "todos", "start": s, "end": e}
        if aliases and aliases.get(i):
            r["alias"] = aliases[i]
        rels.append(r)
    return {
        "name": name, "file": "hostile.sql", "sql": sql, "positionalSql": sql, "relations": rels,
        "params": [{"name": p, "langName": p, "type": "string"} for p in params],
        "columns": columns, "tables": ["todos"],
        "reactive": {"dependencies": [{"table": "todos", "scopes": []}], "coverage": coverage or []},
    }

LIST = [{"table": "todos", "variable": "list_id", "units": ["listId"], "fixedScopes": []}]
ID_TITLE = [col("id", "string"), col("title", "string")]
queries = [
    # scoped, with complete coverage
    q("byList", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"], LIST),
    # §2.1 refusals
    q("noCoverage", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"], []),
    q("duplicateCoverage", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"], LIST + LIST),
    q("extraCoverage", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"],
      LIST + [{"table": "lists", "variable": "list_id", "units": ["listId"], "fixedScopes": []}]),
    q("incompleteCoverage", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"],
      [{"table": "todos", "variable": "owner_id", "units": ["listId"], "fixedScopes": []}]),
    q("emptyUnits", "select id, title from todos where list_id = ? order by id", ID_TITLE, ["listId"],
      [{"table": "todos", "variable": "list_id", "units": [], "fixedScopes": []}]),
    # privileged (whole partition): the hostile shapes
    q("allTodos", "select id, list_id AS listId, title from todos order by id",
      [col("id", "string"), col("list_id", "string", lang="listId"), col("title", "string")]),
    q("aliased", "select t.id AS id, t.title AS title from todos t order by t.id", ID_TITLE, aliases={0: "t"}),
    q("aliasedAs", "select t.id AS id, t.title AS title from todos AS t order by t.id", ID_TITLE, aliases={0: "t"}),
    q("quoted", 'select "id", "title" from "todos" order by "id"', ID_TITLE),
    q("qualifiedColumns", "select todos.id AS id, todos.title AS title from todos order by todos.id", ID_TITLE),
    q("cte", "with mine as (select id, title from todos) select id, title from mine order by id", ID_TITLE),
    q("subquery", "select id, title from (select id, title from todos) AS s where id in (select id from todos) order by id", ID_TITLE),
    q("selfJoin", "select a.id AS id, b.id AS other from todos a join todos b on a.list_id = b.list_id order by a.id, b.id",
      [col("id", "string"), col("other", "string")], aliases={0: "a", 1: "b"}),
    q("twice", "select id, title from todos union all select id, title from todos order by id", ID_TITLE),
    q("countAll", "select count(*) AS n from todos", [col("n", "integer")]),
    q("injection", "select id, title from todos where title = ? order by id", ID_TITLE, ["title"]),
    q("allTodosCapped", "select id, title from todos order by id", ID_TITLE),
    # type normalization failures
    q("badType", "select title AS n from todos", [col("n", "integer")]),
    q("nullForNonNullable", "select attachment from todos", [col("attachment", "blob_ref", nullable=False)]),
    q("badSql", "select id, title from todos where no_such_column = 1", ID_TITLE),
]
doc = {"queryIrVersion": 4, "queries": queries}
with open("hostile.queries.ir.json", "w") as f:
    f.write(json.dumps(doc, indent=2) + "\n")
