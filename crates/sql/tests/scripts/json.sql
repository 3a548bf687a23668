# JSON: a column type kept in MySQL's normal form (members by key length, then key), and the
# JSON_* functions, with the answers MySQL documents.
> CREATE DATABASE js
ok 1
> USE js
ok 0
> CREATE TABLE docs (id INT PRIMARY KEY, doc JSON)
ok 0
> INSERT INTO docs VALUES (1, '{"name": "ann", "tags": ["a", "b"], "age": 30}'), (2, '[1, 2, {"x": null}]'), (3, '"text"'), (4, NULL), (5, '{"bb": 1, "a": {"zz": true, "y": 2.5}}')
ok 5
> SELECT id, doc FROM docs ORDER BY id
id	doc
1	{"age": 30, "name": "ann", "tags": ["a", "b"]}
2	[1, 2, {"x": null}]
3	"text"
4	NULL
5	{"a": {"y": 2.5, "zz": true}, "bb": 1}
> INSERT INTO docs VALUES (6, '{"a": 1,}')
error 3140 (22032): Invalid JSON text: "trailing comma" at position 8 in value for column 'doc'.
> INSERT INTO docs VALUES (6, 'nope')
error 3140 (22032): Invalid JSON text: "expected ident" at position 1 in value for column 'doc'.
> CREATE INDEX by_doc ON docs (doc)
error 3152 (42000): JSON column 'doc' supports indexing only via generated columns on a specified JSON path.
> SELECT id, doc->'$.name', doc->>'$.name', JSON_EXTRACT(doc, '$.tags[1]'), doc->'$.tags[last]' FROM docs WHERE id = 1
id	doc->'$.name'	doc->>'$.name'	JSON_EXTRACT(doc, '$.tags[1]')	doc->'$.tags[last]'
1	"ann"	ann	"b"	"b"
> SELECT id, JSON_TYPE(doc), JSON_LENGTH(doc), JSON_DEPTH(doc), JSON_VALID(doc) FROM docs ORDER BY id
id	JSON_TYPE(doc)	JSON_LENGTH(doc)	JSON_DEPTH(doc)	JSON_VALID(doc)
1	OBJECT	3	3	1
2	ARRAY	3	3	1
3	STRING	1	1	1
4	NULL	NULL	NULL	NULL
5	OBJECT	2	3	1
> SELECT id FROM docs WHERE doc->>'$.name' = 'ann'
id
1
> SELECT JSON_EXTRACT('{"a": 1, "b": 2, "c": [3, 4]}', '$.*'), JSON_EXTRACT('[10, 20, [30, 40]]', '$[2][*]'), JSON_EXTRACT('{"a": 1}', '$.a', '$.b'), JSON_EXTRACT('{"a": 1}', '$.b')
JSON_EXTRACT('{"a": 1, "b": 2, "c": [3, 4]}', '$.*')	JSON_EXTRACT('[10, 20, [30, 40]]', '$[2][*]')	JSON_EXTRACT('{"a": 1}', '$.a', '$.b')	JSON_EXTRACT('{"a": 1}', '$.b')
[1, 2, [3, 4]]	[30, 40]	[1]	NULL
> SELECT JSON_EXTRACT('{"a": 1}', 'a')
error 3143 (42000): Invalid JSON path expression. The error is around character position 0.
> SELECT JSON_EXTRACT('{"a": 1', '$.a')
error 3141 (22032): Invalid JSON text in argument 1 to function json_extract: "EOF while parsing an object" at position 6.
# Building JSON: text is a JSON string, a JSON value is embedded.
> SELECT JSON_OBJECT('id', 87, 'name', 'carrot'), JSON_ARRAY(1, 'abc', NULL, 2.5), JSON_ARRAY('{"a": 1}'), JSON_ARRAY(JSON_OBJECT('a', 1)), JSON_OBJECT('d', CAST('[1, 2]' AS JSON))
JSON_OBJECT('id', 87, 'name', 'carrot')	JSON_ARRAY(1, 'abc', NULL, 2.5)	JSON_ARRAY('{"a": 1}')	JSON_ARRAY(JSON_OBJECT('a', 1))	JSON_OBJECT('d', CAST('[1, 2]' AS JSON))
{"id": 87, "name": "carrot"}	[1, "abc", null, 2.5]	["{\"a\": 1}"]	[{"a": 1}]	{"d": [1, 2]}
> SELECT JSON_OBJECT(NULL, 1)
error 3158 (22032): JSON documents may not contain NULL member names.
> SELECT JSON_QUOTE('null'), JSON_QUOTE('"null"'), JSON_UNQUOTE('"abc"'), JSON_UNQUOTE('abc'), JSON_UNQUOTE('"\\t\\u0032"'), CAST('{"b": 1, "a": 2}' AS JSON), CAST(5 AS JSON)
JSON_QUOTE('null')	JSON_QUOTE('"null"')	JSON_UNQUOTE('"abc"')	JSON_UNQUOTE('abc')	JSON_UNQUOTE('"\\t\\u0032"')	CAST('{"b": 1, "a": 2}' AS JSON)	CAST(5 AS JSON)
"null"	"\"null\""	abc	abc		2	{"a": 2, "b": 1}	5
# Changing JSON (the reference manual's examples).
> SELECT JSON_SET('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]'), JSON_INSERT('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]'), JSON_REPLACE('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]')
JSON_SET('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]')	JSON_INSERT('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]')	JSON_REPLACE('{ "a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]')
{"a": 10, "b": [2, 3], "c": "[true, false]"}	{"a": 1, "b": [2, 3], "c": "[true, false]"}	{"a": 10, "b": [2, 3]}
> SELECT JSON_REMOVE('["a", ["b", "c"], "d"]', '$[1]'), JSON_ARRAY_APPEND('["a", ["b", "c"], "d"]', '$[1]', 1), JSON_ARRAY_APPEND('{"a": 1}', '$.a', 2), JSON_SET('"x"', '$[1]', 'y')
JSON_REMOVE('["a", ["b", "c"], "d"]', '$[1]')	JSON_ARRAY_APPEND('["a", ["b", "c"], "d"]', '$[1]', 1)	JSON_ARRAY_APPEND('{"a": 1}', '$.a', 2)	JSON_SET('"x"', '$[1]', 'y')
["a", "d"]	["a", ["b", "c", 1], "d"]	{"a": [1, 2]}	["x", "y"]
> SELECT JSON_REMOVE('[1]', '$')
error 3153 (42000): The path expression '$' is not allowed in this context.
> SELECT JSON_SET('[1]', '$[*]', 2)
error 3149 (42000): In this situation, path expressions may not contain the * and ** tokens or an array range.
> UPDATE docs SET doc = JSON_SET(doc, '$.age', 31, '$.city', 'Oslo') WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT doc FROM docs WHERE id = 1
doc
{"age": 31, "city": "Oslo", "name": "ann", "tags": ["a", "b"]}
# Searching and merging.
> SELECT JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '1', '$.a'), JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '{"d": 4}', '$.c'), JSON_CONTAINS('[1, 2, [3, 4]]', '[1, 3]'), JSON_CONTAINS('[1, 2]', '5')
JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '1', '$.a')	JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '{"d": 4}', '$.c')	JSON_CONTAINS('[1, 2, [3, 4]]', '[1, 3]')	JSON_CONTAINS('[1, 2]', '5')
1	1	1	0
> SELECT JSON_CONTAINS_PATH('{"a": 1, "b": 2, "c": {"d": 4}}', 'one', '$.a', '$.e'), JSON_CONTAINS_PATH('{"a": 1, "b": 2, "c": {"d": 4}}', 'all', '$.a', '$.e'), JSON_KEYS('{"a": 1, "b": {"c": 30}}'), JSON_KEYS('{"a": 1, "b": {"c": 30}}', '$.b'), JSON_KEYS('[1]')
JSON_CONTAINS_PATH('{"a": 1, "b": 2, "c": {"d": 4}}', 'one', '$.a', '$.e')	JSON_CONTAINS_PATH('{"a": 1, "b": 2, "c": {"d": 4}}', 'all', '$.a', '$.e')	JSON_KEYS('{"a": 1, "b": {"c": 30}}')	JSON_KEYS('{"a": 1, "b": {"c": 30}}', '$.b')	JSON_KEYS('[1]')
1	0	["a", "b"]	["c"]	NULL
> SELECT JSON_CONTAINS_PATH('{}', 'some', '$')
error 3154 (42000): The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.
> SELECT JSON_MERGE_PRESERVE('[1, 2]', '[true, false]'), JSON_MERGE_PRESERVE('{"name": "x"}', '{"id": 47}'), JSON_MERGE_PRESERVE('1', 'true'), JSON_MERGE_PRESERVE('{ "a": 1, "b": 2 }', '{ "a": 3, "c": 4 }')
JSON_MERGE_PRESERVE('[1, 2]', '[true, false]')	JSON_MERGE_PRESERVE('{"name": "x"}', '{"id": 47}')	JSON_MERGE_PRESERVE('1', 'true')	JSON_MERGE_PRESERVE('{ "a": 1, "b": 2 }', '{ "a": 3, "c": 4 }')
[1, 2, true, false]	{"id": 47, "name": "x"}	[1, true]	{"a": [1, 3], "b": 2, "c": 4}
> SELECT JSON_MERGE_PATCH('[1, 2]', '[true, false]'), JSON_MERGE_PATCH('{"name": "x"}', '{"id": 47}'), JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"a": 3, "c": 4}'), JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"b": null}')
JSON_MERGE_PATCH('[1, 2]', '[true, false]')	JSON_MERGE_PATCH('{"name": "x"}', '{"id": 47}')	JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"a": 3, "c": 4}')	JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"b": null}')
[true, false]	{"id": 47, "name": "x"}	{"a": 3, "b": 2, "c": 4}	{"a": 1}
# Aggregating into JSON.
> CREATE TABLE attrs (id INT PRIMARY KEY, item INT, k VARCHAR(10), v VARCHAR(10))
ok 0
> INSERT INTO attrs VALUES (1, 1, 'color', 'red'), (2, 1, 'fabric', 'silk'), (3, 2, 'color', 'green'), (4, 2, 'shape', NULL)
ok 4
> SELECT item, JSON_ARRAYAGG(k), JSON_OBJECTAGG(k, v) FROM attrs GROUP BY item ORDER BY item
item	JSON_ARRAYAGG(k)	JSON_OBJECTAGG(k, v)
1	["color", "fabric"]	{"color": "red", "fabric": "silk"}
2	["color", "shape"]	{"color": "green", "shape": null}
> SELECT JSON_ARRAYAGG(v) FROM attrs WHERE id < 0
JSON_ARRAYAGG(v)
NULL
# Documents nest at most 100 arrays and objects deep (MySQL's limit, error 3157), however
# long the text; brackets inside strings do not count.
> SELECT JSON_VALID(CONCAT(REPEAT('[', 100), REPEAT(']', 100)))
JSON_VALID(CONCAT(REPEAT('[', 100), REPEAT(']', 100)))
1
> SELECT JSON_VALID(CONCAT(REPEAT('[', 101), REPEAT(']', 101)))
error 3157 (22032): The JSON document exceeds the maximum depth.
> SELECT JSON_VALID(REPEAT('[', 100000))
error 3157 (22032): The JSON document exceeds the maximum depth.
> SELECT JSON_VALID(CONCAT('["', REPEAT('[', 200), '"]'))
JSON_VALID(CONCAT('["', REPEAT('[', 200), '"]'))
1
> SELECT JSON_LENGTH(CONCAT(REPEAT('{"a":', 100), '1', REPEAT('}', 100)))
JSON_LENGTH(CONCAT(REPEAT('{"a":', 100), '1', REPEAT('}', 100)))
1
> SELECT CAST(CONCAT(REPEAT('{"a":', 101), '1', REPEAT('}', 101)) AS JSON)
error 3157 (22032): The JSON document exceeds the maximum depth.
> SELECT JSON_EXTRACT(CONCAT(REPEAT('[', 101), REPEAT(']', 101)), '$[0]')
error 3157 (22032): The JSON document exceeds the maximum depth.
