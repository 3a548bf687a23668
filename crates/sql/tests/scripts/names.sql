# The names of result columns: an unaliased expression is named by its text in the query, as
# written; a column by the query's spelling; a string literal by its value. Also the words
# MySQL allows after SELECT, and where a syntax error points.
> CREATE DATABASE names
ok 1
> USE names
ok 0
> CREATE TABLE t (Id INT PRIMARY KEY, v INT)
ok 0
> INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)
ok 3
> SELECT 1+1, 1 + 1, COUNT( * ), id, ID, t.id, 'abc', NULL, true, -v, (v), v   *  2, v MOD 3, v DIV 3 FROM t WHERE id = 1
1+1	1 + 1	COUNT( * )	id	ID	id	abc	NULL	TRUE	-v	(v)	v   *  2	v MOD 3	v DIV 3
2	2	1	1	1	1	abc	NULL	1	-10	10	20	1	3
> SELECT * FROM t WHERE id = 1
Id	v
1	10
> SELECT v+1 FROM t ORDER BY `v+1` DESC LIMIT 1
v+1
31
> SELECT d.`v*2` FROM (SELECT v*2 FROM t) AS d WHERE d.`v*2` > 30
v*2
40
60
> SELECT CONCAT('a''b', "c"), 'it''s', /* a comment */ LENGTH('x') /* after */ FROM t LIMIT 1
CONCAT('a''b', "c")	it's	LENGTH('x')
a'bc	it's	1
> SELECT DISTINCTROW v > 10 FROM t
v > 10
0
1
> SELECT SQL_NO_CACHE HIGH_PRIORITY SQL_SMALL_RESULT SQL_BIG_RESULT SQL_BUFFER_RESULT STRAIGHT_JOIN id FROM t ORDER BY id LIMIT 1
id
1
> SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1
id
1
> SELECT FOUND_ROWS()
FOUND_ROWS()
3
> SELECT id FROM t ORDER BY id LIMIT 1
id
1
> SELECT FOUND_ROWS()
FOUND_ROWS()
1
> SELECT SQL_CALC_FOUND_ROWS id FROM t WHERE v > 10 LIMIT 1, 5
id
3
> SELECT FOUND_ROWS()
FOUND_ROWS()
2
> SELEC 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC 1' at line 1
> SELECT * FROM t WHERE
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1
> SELECT id FROM t WHERE id = = 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '= 1' at line 1
> SELECT 1 FROM t a JOIN t b USING (id)
1
1
1
1
