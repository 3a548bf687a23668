# Common table expressions: WITH name [(columns)] AS (query), each usable by the CTEs after it and
# by the query, its subqueries included; a reference may take an alias of its own. WITH RECURSIVE
# runs its seeds, then its recursive SELECTs over the rows of the round before, until a round adds
# none (at most cte_max_recursion_depth rounds).
> CREATE DATABASE cte
ok 1
> USE cte
ok 0
> CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(20), dept INT, salary INT)
ok 0
> INSERT INTO emp VALUES (1, 'ann', 10, 100), (2, 'bob', 10, 80), (3, 'cid', 20, 120), (4, 'dee', 20, 90), (5, 'eve', 30, 70)
ok 5
> WITH t AS (SELECT 1 AS a) SELECT * FROM t
a
1
> WITH t (x, y) AS (SELECT 1, 2) SELECT x + y, t.x FROM t
x + y	x
3	1
> WITH by_dept AS (SELECT dept, SUM(salary) AS total FROM emp GROUP BY dept), top AS (SELECT dept FROM by_dept WHERE total > 180) SELECT e.name FROM emp e JOIN top ON e.dept = top.dept ORDER BY e.name
name
cid
dee
> WITH rich AS (SELECT id FROM emp WHERE salary >= 100) SELECT name FROM emp WHERE id IN (SELECT id FROM rich) ORDER BY id
name
ann
cid
> WITH d AS (SELECT DISTINCT dept FROM emp) SELECT a.dept, b.dept FROM d a JOIN d b ON a.dept < b.dept ORDER BY a.dept, b.dept
dept	dept
10	20
10	30
20	30
> WITH u AS (SELECT dept FROM emp WHERE dept = 10 UNION SELECT 40) SELECT COUNT(*), SUM(dept) FROM u
COUNT(*)	SUM(dept)
2	50
# A CTE hides a table of the same name, in the query that defines it only.
> WITH emp AS (SELECT 42 AS id) SELECT id FROM emp
id
42
> SELECT COUNT(*) FROM emp
COUNT(*)
5
> INSERT INTO emp WITH n AS (SELECT 6 AS id) SELECT id, 'fay', 30, 60 FROM n
ok 1
> SELECT name FROM emp WHERE id = 6
name
fay
# Derived tables name their columns the same way.
> SELECT p, q FROM (SELECT id, name FROM emp WHERE id = 1) AS d (p, q)
p	q
1	ann
# Errors keep MySQL's codes.
> WITH t AS (SELECT 1), t AS (SELECT 2) SELECT 1
error 1066 (42000): Not unique table/alias: 't'
> WITH t (a, b) AS (SELECT 1) SELECT * FROM t
error 1353 (HY000): In definition of view, derived table or common table expression, SELECT list and column names list have different column counts
> SELECT * FROM (SELECT 1, 2) AS d (a)
error 1353 (HY000): In definition of view, derived table or common table expression, SELECT list and column names list have different column counts
# Recursive CTEs.
> WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT * FROM t
n
1
2
3
4
5
> WITH RECURSIVE fib (n, a, b) AS (SELECT 1, 0, 1 UNION ALL SELECT n + 1, b, a + b FROM fib WHERE n < 10) SELECT n, a FROM fib
n	a
1	0
2	1
3	1
4	2
5	3
6	5
7	8
8	13
9	21
10	34
> CREATE TABLE tree (id INT PRIMARY KEY, parent INT, label VARCHAR(10))
ok 0
> INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'), (5, 4, 'a1x'), (6, 3, 'b1')
ok 6
> WITH RECURSIVE below (id, label, depth) AS (SELECT id, label, 0 FROM tree WHERE id = 2 UNION ALL SELECT t.id, t.label, b.depth + 1 FROM tree t JOIN below b ON t.parent = b.id) SELECT * FROM below ORDER BY depth, id
id	label	depth
2	a	0
4	a1	1
5	a1x	2
> WITH RECURSIVE up AS (SELECT id, parent FROM tree WHERE id = 5 UNION ALL SELECT t.id, t.parent FROM tree t, up WHERE t.id = up.parent) SELECT COUNT(*), GROUP_CONCAT(id ORDER BY id) FROM up
COUNT(*)	GROUP_CONCAT(id ORDER BY id)
4	1,2,4,5
# UNION DISTINCT drops rows already produced, which ends a cycle.
> WITH RECURSIVE c (x) AS (SELECT 1 UNION SELECT x % 3 + 1 FROM c) SELECT * FROM c ORDER BY x
x
1
2
3
# A CTE named after a recursive one may use it.
> WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM t WHERE n < 3), u AS (SELECT n * 10 AS m FROM t) SELECT * FROM u
m
10
20
30
> WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1000) SELECT COUNT(*), SUM(n) FROM t
COUNT(*)	SUM(n)
1000	500500
> WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT COUNT(*) FROM t
error 3636 (HY000): Recursive query aborted after 1001 iterations. Try increasing @@cte_max_recursion_depth to a larger value.
> SET SESSION cte_max_recursion_depth = 2000
ok 0
> WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1500) SELECT COUNT(*), MAX(n) FROM t
COUNT(*)	MAX(n)
1500	1500
> WITH RECURSIVE t (n) AS (SELECT n FROM t UNION ALL SELECT 1) SELECT * FROM t
error 3573 (HY000): Recursive Common Table Expression 't' should have one or more non-recursive query blocks followed by one or more recursive ones
> WITH RECURSIVE t (a, b) AS (SELECT 1 UNION ALL SELECT a + 1 FROM t WHERE a < 3) SELECT * FROM t
error 1353 (HY000): In definition of view, derived table or common table expression, SELECT list and column names list have different column counts
