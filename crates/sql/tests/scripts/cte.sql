# Common table expressions: WITH name [(columns)] AS (query), each usable by the CTEs after it and
# by the query, its subqueries included; a reference may take an alias of its own.
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
> WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t
error 1235 (42000): This version of Strata doesn't yet support 'recursive common table expressions'
