# Writes watch.syncular.ir.json (the todos table of demo-react.syncular.ir.json plus a second table, notes,
# with the same list scope) and watch.queries.ir.json (queryIrVersion 4, relation plans computed here) for
# OperationWatchTest. Run: python3 gen_watch.py
import json, re

schema = json.load(open("demo-react.syncular.ir.json"))
schema["tables"].append({
    "name": "notes", "primaryKey": "id",
    "columns": [
        {"name": "id", "type": "string", "nullable": False},
        {"name": "list_id", "type": "string", "nullable": False},
        {"name": "body", "type": "string", "nullable": False},
    ],
    "scopes": [{"pattern": "list:{list_id}", "variable": "list_id", "column": "list_id"}],
    "extensions": {},
})
with open("watch.syncular.ir.json", "w") as f:
    f.write(json.dumps(schema, indent=2) + "\n")

def occurrences(sql, table):
    return [(m.start(), m.end()) for m in re.finditer(r"\b%s\b" % table, sql)]

def q(name, sql, table, columns):
    return {
        "name": name, "file": "watch.sql", "sql": sql, "positionalSql": sql,
        "relations": [{"table": table, "start": s, "end": e} for s, e in occurrences(sql, table)],
        "params": [{"name": "listId", "langName": "listId", "type": "string"}],
        "columns": [{"name": c, "langName": c, "type": "string", "nullable": False} for c in columns],
        "tables": [table],
        "reactive": {"dependencies": [{"table": table, "scopes": []}],
                     "coverage": [{"table": table, "variable": "list_id", "units": ["listId"], "fixedScopes": []}]},
    }

doc = {"queryIrVersion": 4, "queries": [
    q("todosInList", "select id, title from todos where list_id = ? order by id", "todos", ["id", "title"]),
    # pg_sleep holds a run in flight (unwatch during a run)
    q("slowTodosInList", "with pause as (select pg_sleep(0.4) as z) select id, title from todos, pause where list_id = ? order by id",
      "todos", ["id", "title"]),
    q("notesInList", "select id, body from notes where list_id = ? order by id", "notes", ["id", "body"]),
    # fails (division by zero) once the list holds a todo titled "division-zero" (13 characters): a rerun failure
    q("fragileTodosInList",
      "select id, title from todos where list_id = ? and 100 / (length(title) - 13) <> 0 order by id",
      "todos", ["id", "title"]),
]}
with open("watch.queries.ir.json", "w") as f:
    f.write(json.dumps(doc, indent=2) + "\n")
