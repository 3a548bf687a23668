# GROUP BY … WITH ROLLUP: after the groups, a super-aggregate row for every prefix of the
# GROUP BY list, its rolled-up values NULL, in MySQL's order (MySQL's manual's sales table).
> CREATE DATABASE ru
ok 1
> USE ru
ok 0
> CREATE TABLE sales (year INT, country VARCHAR(20), product VARCHAR(32), profit INT, sold DATE)
ok 0
> INSERT INTO sales VALUES (2000,'Finland','Computer',1500,'2000-01-05'),(2000,'Finland','Phone',100,'2000-02-01'),(2001,'Finland','Phone',10,'2001-03-03'),(2000,'India','Calculator',75,'2000-01-20'),(2000,'India','Calculator',75,'2000-02-11'),(2000,'India','Computer',1200,'2000-02-12'),(2000,'USA','Calculator',75,'2000-03-01'),(2000,'USA','Computer',1500,'2000-03-02'),(2001,'USA','Calculator',50,'2001-01-07'),(2001,'USA','Computer',1500,'2001-01-08'),(2001,'USA','Computer',1200,'2001-02-09'),(2001,'USA','TV',150,'2001-02-10'),(2001,'USA','TV',100,'2001-03-11')
ok 13
> SELECT year, SUM(profit) AS profit FROM sales GROUP BY year WITH ROLLUP
year	profit
2000	4525
2001	3010
NULL	7535
> SELECT year, country, product, SUM(profit) AS profit FROM sales GROUP BY year, country, product WITH ROLLUP
year	country	product	profit
2000	Finland	Computer	1500
2000	Finland	Phone	100
2000	Finland	NULL	1600
2000	India	Calculator	150
2000	India	Computer	1200
2000	India	NULL	1350
2000	USA	Calculator	75
2000	USA	Computer	1500
2000	USA	NULL	1575
2000	NULL	NULL	4525
2001	Finland	Phone	10
2001	Finland	NULL	10
2001	USA	Calculator	50
2001	USA	Computer	2700
2001	USA	TV	250
2001	USA	NULL	3000
2001	NULL	NULL	3010
NULL	NULL	NULL	7535
> SELECT IFNULL(country, 'All') AS c, COUNT(*), COUNT(DISTINCT product), MAX(profit) FROM sales GROUP BY country WITH ROLLUP
c	COUNT(*)	COUNT(DISTINCT product)	MAX(profit)
Finland	3	2	1500
India	3	2	1200
USA	7	3	1500
All	13	4	1500
> SELECT year, country, SUM(profit) FROM sales GROUP BY year, country WITH ROLLUP HAVING country IS NULL
year	country	SUM(profit)
2000	NULL	4525
2001	NULL	3010
NULL	NULL	7535
> SELECT year, SUM(profit) FROM sales GROUP BY 1 WITH ROLLUP ORDER BY year DESC
year	SUM(profit)
2001	3010
2000	4525
NULL	7535
> SELECT YEAR(sold) AS y, MONTH(sold) AS m, SUM(profit) FROM sales GROUP BY YEAR(sold), MONTH(sold) WITH ROLLUP
y	m	SUM(profit)
2000	1	1575
2000	2	1375
2000	3	1575
2000	NULL	4525
2001	1	1550
2001	2	1350
2001	3	110
2001	NULL	3010
NULL	NULL	7535
> SELECT country, SUM(profit) FROM sales WHERE year = 1999 GROUP BY country WITH ROLLUP
country	SUM(profit)
> SELECT country, SUM(profit) FROM sales GROUP BY country WITH CUBE
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near 'WITH CUBE'
# GROUPING(e) is 1 where e is rolled up; of several arguments, a bit each, the first highest.
> SELECT year, country, SUM(profit), GROUPING(year), GROUPING(country), GROUPING(year, country) FROM sales GROUP BY year, country WITH ROLLUP
year	country	SUM(profit)	GROUPING(year)	GROUPING(country)	GROUPING(year, country)
2000	Finland	1600	0	0	0
2000	India	1350	0	0	0
2000	USA	1575	0	0	0
2000	NULL	4525	0	1	1
2001	Finland	10	0	0	0
2001	USA	3000	0	0	0
2001	NULL	3010	0	1	1
NULL	NULL	7535	1	1	3
> SELECT IF(GROUPING(country), 'All countries', country) AS c, SUM(profit) FROM sales GROUP BY country WITH ROLLUP HAVING GROUPING(country) = 1 OR SUM(profit) > 2000
c	SUM(profit)
USA	4575
All countries	7535
> SELECT GROUPING(product) FROM sales GROUP BY year WITH ROLLUP
error 3602 (HY000): Argument #1 of GROUPING function is not in GROUP BY
> SELECT year, GROUPING(year) FROM sales GROUP BY year
error 3603 (HY000): Invalid use of GROUPING function
> SELECT year FROM sales WHERE GROUPING(year) = 0 GROUP BY year WITH ROLLUP
error 3603 (HY000): Invalid use of GROUPING function
> DROP DATABASE ru
ok 0
