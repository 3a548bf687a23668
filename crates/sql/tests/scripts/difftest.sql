# Reproducers of answers the differential tester (crates/difftest) found differing from MySQL's,
# each checked against MariaDB; every output below is MariaDB's.
> CREATE DATABASE dt
ok 1
> USE dt
ok 0
> CREATE TABLE a (id INT PRIMARY KEY, k INT, note VARCHAR(10))
ok 0
> CREATE TABLE b (id INT PRIMARY KEY, x INT, y INT, KEY bxy (x, y))
ok 0
> CREATE TABLE c (id INT PRIMARY KEY, b_id INT, z DECIMAL(8,2))
ok 0
> INSERT INTO a VALUES (1, 5, 'é'), (2, 5, 'ab'), (3, 6, 'a'), (4, NULL, NULL)
ok 4
> INSERT INTO b VALUES (10, 5, 1), (11, 5, 2), (12, 6, 1), (13, 7, 7)
ok 4
> INSERT INTO c VALUES (100, 10, 2.50), (101, 11, 6.00), (102, 12, 13.75), (103, 99, NULL)
ok 4
> ANALYZE TABLE a, b, c
Table	Op	Msg_type	Msg_text
dt.a	analyze	status	OK
dt.b	analyze	status	OK
dt.c	analyze	status	OK

# An index join through a composite index that reaches one row of `b` from two rows of `a`
# (both with k = 5): the batched read asks for the row twice and must return it twice.
> SELECT a.id, b.id, c.id FROM a, b, c WHERE b.x = a.k AND c.b_id = b.id AND a.id IN (1, 2, 3) AND b.y IN (1, 2) ORDER BY 1, 2, 3
id	id	id
1	10	100
1	11	101
2	10	100
2	11	101
3	12	102

# A subquery two levels down reads the outermost query's row.
> SELECT a.id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.x = a.k AND EXISTS (SELECT 1 FROM c WHERE c.b_id = b.id AND c.z > a.id)) ORDER BY 1
id
1
2
3
> SELECT b.id, (SELECT COUNT(*) FROM c WHERE c.b_id IN (SELECT b2.id FROM b AS b2 WHERE b2.x = b.x AND b2.y <= b.y)) AS n FROM b ORDER BY 1
id	n
10	1
11	2
12	1
13	0

# IF, IFNULL, CASE and COALESCE show the most decimals of their results.
> SELECT IFNULL(z, z * z), IF(z > 5, 1, z), CASE WHEN z > 5 THEN 2 ELSE z / 4 END, COALESCE(NULL, z, 1) FROM c ORDER BY id
IFNULL(z, z * z)	IF(z > 5, 1, z)	CASE WHEN z > 5 THEN 2 ELSE z / 4 END	COALESCE(NULL, z, 1)
2.5000	2.50	0.625000	2.50
6.0000	1.00	2.000000	6.00
13.7500	1.00	2.000000	13.75
NULL	NULL	NULL	1.00

# A UNION's column takes the merged type of its parts (1 and 1.00 are one row of 1.0000).
> SELECT z FROM c WHERE id = 100 UNION SELECT 1 UNION SELECT 1.00 UNION SELECT id / 3 FROM a WHERE id = 1
z
2.5000
1.0000
0.3333

# A date among strings is its text, so DISTINCT finds the duplicate.
> SELECT CAST('2024-03-01' AS DATE) UNION SELECT '2024-03-01'
CAST('2024-03-01' AS DATE)
2024-03-01

# `_` stands for one character, however many bytes it takes.
> SELECT note, note LIKE '_', note LIKE 'a_', note LIKE '%é' FROM a ORDER BY id
note	note LIKE '_'	note LIKE 'a_'	note LIKE '%é'
é	1	0	1
ab	0	1	0
a	1	0	0
NULL	NULL	NULL	NULL

# A decimal quotient keeps nine-digit words of fraction and is rounded only when shown.
> SELECT 1/3*3, 13.75/11/11, z / 3 * 3 FROM c WHERE id = 100
1/3*3	13.75/11/11	z / 3 * 3
1.0000	0.1136363636	2.500000
