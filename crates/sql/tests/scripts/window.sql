# Window functions: computed over the rows a query block keeps after its WHERE, GROUP BY and
# HAVING, each row seeing its partition in the window's order; the frame (ROWS or RANGE) bounds
# what FIRST_VALUE, LAST_VALUE, NTH_VALUE and aggregates read. Without ORDER BY the rows leave in
# the order of the last window.
> CREATE DATABASE win
ok 1
> USE win
ok 0
> CREATE TABLE emp (id INT PRIMARY KEY, dept VARCHAR(10), salary INT, hired DATE)
ok 0
> INSERT INTO emp VALUES (1, 'eng', 100, '2024-01-01'), (2, 'eng', 200, '2024-01-02'), (3, 'ops', 150, '2024-01-05'), (4, 'ops', 150, '2024-01-06'), (5, 'ops', 300, '2024-01-10'), (6, 'hr', NULL, NULL)
ok 6
# Ranking: peers (equal in the order keys) share RANK and DENSE_RANK; NULL sorts first.
> SELECT id, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY salary DESC) AS rn, RANK() OVER (ORDER BY salary) AS r, DENSE_RANK() OVER (ORDER BY salary) AS dr, PERCENT_RANK() OVER (ORDER BY salary) AS pr, CUME_DIST() OVER (ORDER BY salary) AS cd FROM emp ORDER BY id
id	rn	r	dr	pr	cd
1	2	2	2	0.2	0.3333333333333333
2	1	5	4	0.8	0.8333333333333334
3	2	3	3	0.4	0.6666666666666666
4	3	3	3	0.4	0.6666666666666666
5	1	6	5	1	1
6	1	1	1	0	0.16666666666666666
> SELECT id, NTILE(4) OVER (ORDER BY id) AS q, NTILE(10) OVER (ORDER BY id) AS d FROM emp
id	q	d
1	1	1
2	1	2
3	2	3
4	2	4
5	3	5
6	4	6
# Without ORDER BY in the window every row is a peer: the frame is the whole partition.
> SELECT id, SUM(salary) OVER () AS total, SUM(salary) OVER (PARTITION BY dept) AS by_dept, COUNT(*) OVER (PARTITION BY dept) AS n, RANK() OVER () AS r FROM emp ORDER BY id
id	total	by_dept	n	r
1	900	300	2	1
2	900	300	2	1
3	900	600	3	1
4	900	600	3	1
5	900	600	3	1
6	900	NULL	1	1
# With ORDER BY the default frame runs to the current row's last peer (a running total).
> SELECT id, salary, SUM(salary) OVER (ORDER BY salary) AS running, COUNT(salary) OVER (ORDER BY salary) AS n FROM emp ORDER BY id
id	salary	running	n
1	100	100	1
2	200	600	4
3	150	400	3
4	150	400	3
5	300	900	5
6	NULL	NULL	0
> SELECT id, SUM(salary) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS moving, AVG(salary) OVER (ORDER BY id ROWS 2 PRECEDING) AS avg3, MAX(salary) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS max_after, MIN(salary) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) AS ahead FROM emp
id	moving	avg3	max_after	ahead
1	300	100.0000	300	150
2	450	150.0000	300	150
3	500	150.0000	300	300
4	600	166.6667	300	NULL
5	450	200.0000	300	NULL
6	300	225.0000	NULL	NULL
# RANGE frames measure the order key: numbers by a distance, dates by an INTERVAL.
> SELECT id, salary, COUNT(*) OVER (ORDER BY salary RANGE BETWEEN 50 PRECEDING AND 50 FOLLOWING) AS near, SUM(salary) OVER (ORDER BY salary DESC RANGE BETWEEN CURRENT ROW AND 100 FOLLOWING) AS below FROM emp ORDER BY id
id	salary	near	below
1	100	3	100
2	200	3	600
3	150	4	400
4	150	4	400
5	300	1	500
6	NULL	1	NULL
> SELECT id, hired, COUNT(*) OVER (ORDER BY hired RANGE BETWEEN INTERVAL 3 DAY PRECEDING AND CURRENT ROW) AS recent FROM emp ORDER BY id
id	hired	recent
1	2024-01-01	1
2	2024-01-02	2
3	2024-01-05	2
4	2024-01-06	2
5	2024-01-10	1
6	NULL	1
# LAG and LEAD read other rows of the partition; FIRST_VALUE, LAST_VALUE, NTH_VALUE the frame.
> SELECT id, LAG(salary) OVER w AS prev, LEAD(salary, 2, -1) OVER w AS next2, FIRST_VALUE(salary) OVER w AS first, LAST_VALUE(salary) OVER w AS last, NTH_VALUE(salary, 2) OVER w AS second FROM emp WINDOW w AS (PARTITION BY dept ORDER BY id)
id	prev	next2	first	last	second
1	NULL	-1	100	100	NULL
2	100	-1	100	200	200
6	NULL	-1	NULL	NULL	NULL
3	NULL	300	150	150	NULL
4	150	-1	150	150	150
5	150	-1	150	300	150
> SELECT id, LAST_VALUE(id) OVER (ORDER BY dept ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_all, FIRST_VALUE(id) OVER (PARTITION BY dept ORDER BY id DESC) AS newest FROM emp ORDER BY id
id	last_all	newest
1	5	2
2	5	2
3	5	5
4	5	5
5	5	5
6	5	6
# A window may name another and add an ORDER BY and a frame.
> SELECT id, SUM(salary) OVER (w ORDER BY id ROWS UNBOUNDED PRECEDING) AS running, COUNT(*) OVER w AS n FROM emp WINDOW w AS (PARTITION BY dept) ORDER BY id
id	running	n
1	100	2
2	300	2
3	150	3
4	300	3
5	600	3
6	NULL	1
# Windows over groups: their arguments and keys may be aggregates.
> SELECT dept, SUM(salary) AS total, RANK() OVER (ORDER BY SUM(salary) DESC) AS place, SUM(SUM(salary)) OVER () AS grand FROM emp GROUP BY dept ORDER BY place
dept	total	place	grand
ops	600	1	900
eng	300	2	900
hr	NULL	3	900
> SELECT dept, COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY dept) AS rn FROM emp GROUP BY dept HAVING COUNT(*) > 1
dept	n	rn
eng	2	1
ops	3	2
# A window's value may be used in expressions, ORDER BY, DISTINCT and LIMIT, which come after it.
> SELECT id, salary - AVG(salary) OVER (PARTITION BY dept) AS above_avg FROM emp ORDER BY ROW_NUMBER() OVER (ORDER BY salary DESC, id) LIMIT 3
id	above_avg
5	100.0000
2	50.0000
3	-50.0000
> SELECT DISTINCT dept, COUNT(*) OVER (PARTITION BY dept) AS n FROM emp ORDER BY dept
dept	n
eng	2
hr	1
ops	3
> SELECT id, JSON_ARRAYAGG(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest FROM emp WHERE id <= 4
id	rest
1	[1, 2, 3, 4]
2	[2, 3, 4]
3	[3, 4]
4	[4]
> SELECT * FROM (SELECT id, dept, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY salary DESC, id) AS rn FROM emp) AS ranked WHERE rn = 1 ORDER BY dept
id	dept	rn
2	eng	1
6	hr	1
5	ops	1
> SELECT x, SUM(x) OVER (ORDER BY x) AS s FROM (SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 2 UNION ALL SELECT 3) AS t
x	s
1	1
2	5
2	5
3	8
> SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM emp WHERE id > 100
id	rn
# Where a window function may not be, and windows MySQL refuses.
> SELECT id FROM emp WHERE ROW_NUMBER() OVER () > 1
error 3593 (HY000): You cannot use the window function 'row_number' in this context.'
> SELECT dept FROM emp GROUP BY dept HAVING RANK() OVER () > 1
error 3593 (HY000): You cannot use the window function 'rank' in this context.'
> SELECT dept FROM emp GROUP BY ROW_NUMBER() OVER ()
error 3593 (HY000): You cannot use the window function 'row_number' in this context.'
> SELECT SUM(ROW_NUMBER() OVER ()) FROM emp
error 3593 (HY000): You cannot use the window function 'row_number' in this context.'
> SELECT LAG(ROW_NUMBER() OVER ()) OVER () FROM emp
error 3593 (HY000): You cannot use the window function 'row_number' in this context.'
> SELECT ROW_NUMBER() OVER (ORDER BY RANK() OVER ()) FROM emp
error 3595 (HY000): You cannot nest a window function in the specification of window '<unnamed window>'.
> UPDATE emp SET salary = ROW_NUMBER() OVER ()
error 3593 (HY000): You cannot use the window function 'row_number' in this context.'
> SELECT ROW_NUMBER() OVER w FROM emp
error 3579 (HY000): Window name 'w' is not defined.
> SELECT ROW_NUMBER() OVER w FROM emp WINDOW w AS (), w AS (ORDER BY id)
error 3591 (HY000): Window 'w' is defined twice.
> SELECT ROW_NUMBER() OVER (w PARTITION BY dept) FROM emp WINDOW w AS (ORDER BY id)
error 3581 (HY000): A window which depends on another cannot define partitioning.
> SELECT ROW_NUMBER() OVER (w ORDER BY id) FROM emp WINDOW w AS (ORDER BY salary)
error 3583 (HY000): Window '<unnamed window>' cannot inherit 'w' since both contain an ORDER BY clause.
> SELECT SUM(salary) OVER (w) FROM emp WINDOW w AS (ORDER BY id ROWS UNBOUNDED PRECEDING)
error 3582 (HY000): Window 'w' has a frame definition, so cannot be referenced by another window.
> SELECT ROW_NUMBER() OVER (ORDER BY 1) FROM emp
error 3592 (HY000): Window '<unnamed window>': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression.
> SELECT SUM(salary) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM emp
error 3584 (HY000): Window '<unnamed window>': frame start cannot be UNBOUNDED FOLLOWING.
> SELECT SUM(salary) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM emp
error 3585 (HY000): Window '<unnamed window>': frame end cannot be UNBOUNDED PRECEDING.
> SELECT SUM(salary) OVER (ORDER BY id ROWS -1 PRECEDING) FROM emp
error 3586 (HY000): Window '<unnamed window>': frame start or end is negative, NULL or of non-integral type
> SELECT SUM(salary) OVER (ORDER BY id ROWS 1.5 PRECEDING) FROM emp
error 3586 (HY000): Window '<unnamed window>': frame start or end is negative, NULL or of non-integral type
> SELECT SUM(salary) OVER (ORDER BY dept RANGE 1 PRECEDING) FROM emp
error 3587 (HY000): Window '<unnamed window>' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type
> SELECT SUM(salary) OVER (ORDER BY id, dept RANGE 1 PRECEDING) FROM emp
error 3587 (HY000): Window '<unnamed window>' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type
> SELECT SUM(salary) OVER (ORDER BY hired RANGE 1 PRECEDING) FROM emp
error 3588 (HY000): Window '<unnamed window>' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed.
> SELECT SUM(salary) OVER (ORDER BY id RANGE INTERVAL 1 DAY PRECEDING) FROM emp
error 3589 (HY000): Window '<unnamed window>' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed.
> SELECT SUM(salary) OVER (ORDER BY id ROWS INTERVAL 1 DAY PRECEDING) FROM emp
error 3596 (HY000): Window '<unnamed window>': INTERVAL can only be used with RANGE frames.
> SELECT SUM(salary) OVER (ORDER BY id ROWS id PRECEDING) FROM emp
error 3590 (HY000): Window '<unnamed window>' has a non-constant frame bound.
> SELECT NTILE(0) OVER () FROM emp
error 1210 (HY000): Incorrect arguments to ntile
> SELECT NTILE(salary) OVER () FROM emp
error 1210 (HY000): Incorrect arguments to ntile
> SELECT LAG(salary, -1) OVER () FROM emp
error 1210 (HY000): Incorrect arguments to lag
> SELECT NTH_VALUE(salary, 0) OVER () FROM emp
error 1210 (HY000): Incorrect arguments to nth_value
> SELECT COUNT(DISTINCT salary) OVER () FROM emp
error 1235 (42000): This version of Strata doesn't yet support 'count(DISTINCT ..)'
> SELECT GROUP_CONCAT(salary) OVER () FROM emp
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near 'OVER' in 'GROUP_CONCAT(salary) OVER ()'
> SELECT UPPER(dept) OVER () FROM emp
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near 'OVER' in 'UPPER(dept) OVER ()'
> SELECT ROW_NUMBER(1) OVER () FROM emp
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near 'ROW_NUMBER(1) OVER ()'
