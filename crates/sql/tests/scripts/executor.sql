# The operator pipeline: what each operator hands the next, and where a LIMIT stops the scan.
> CREATE DATABASE x
ok 1
> USE x
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(10))
ok 0
> INSERT INTO t WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 700) SELECT i, i % 7, CONCAT('c', i % 5) FROM n
ok 700
# HAVING without GROUP BY filters the rows before LIMIT counts them.
> SELECT id FROM t HAVING id > 695 LIMIT 2
id
696
697
> SELECT id FROM t HAVING id > 690 ORDER BY id LIMIT 2 OFFSET 3
id
694
695
# LIMIT and OFFSET across the scan's pages (256 rows, then larger).
> SELECT id FROM t WHERE k = 3 LIMIT 3 OFFSET 95
id
668
675
682
> SELECT COUNT(*) FROM (SELECT id FROM t LIMIT 650) AS d
COUNT(*)
650
> SELECT id FROM t ORDER BY id DESC LIMIT 2 OFFSET 600
id
100
99
> SELECT id FROM t LIMIT 0
id
# DISTINCT keeps the first row of each value, then ORDER BY and LIMIT.
> SELECT DISTINCT c FROM t ORDER BY c DESC LIMIT 3
c
c4
c3
c2
> SELECT DISTINCT k FROM t WHERE id < 20 LIMIT 4 OFFSET 2
k
3
4
5
6
# Grouping, HAVING over aggregates, ORDER BY an aggregate.
> SELECT k, COUNT(*), SUM(id) FROM t GROUP BY k HAVING COUNT(*) > 99 ORDER BY SUM(id) DESC LIMIT 3
k	COUNT(*)	SUM(id)
0	100	35350
6	100	35250
5	100	35150
> SELECT COUNT(*), MAX(id) FROM t WHERE id < 0
COUNT(*)	MAX(id)
0	NULL
# Windows without ORDER BY leave in the window's order.
> SELECT id, ROW_NUMBER() OVER (ORDER BY id DESC) FROM t WHERE id <= 4
id	ROW_NUMBER() OVER (ORDER BY id DESC)
4	1
3	2
2	3
1	4
> SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY id) FROM t WHERE id <= 9 ORDER BY id
k	id	SUM(id) OVER (PARTITION BY k ORDER BY id)
1	1	1
2	2	2
3	3	3
4	4	4
5	5	5
6	6	6
0	7	7
1	8	9
2	9	11
# Subqueries, correlated and not, with a LIMIT above them.
> SELECT id, (SELECT MAX(k) FROM t AS u WHERE u.id < t.id) FROM t WHERE id > 2 ORDER BY id LIMIT 3
id	(SELECT MAX(k) FROM t AS u WHERE u.id < t.id)
3	2
4	3
5	4
> SELECT id FROM t WHERE id IN (SELECT id + 1 FROM t WHERE k = 0) ORDER BY id DESC LIMIT 2
id
694
687
# A locking read locks the rows it returns.
> BEGIN
ok 0
> SELECT id FROM t WHERE id >= 10 LIMIT 2 FOR UPDATE
id
10
11
> COMMIT
ok 0
> EXPLAIN SELECT id FROM t HAVING id > 695 LIMIT 2
id	estRows	task	access object	operator info
Limit	2.00	root		count:2
└─Projection	8000.00	root		t.id
  └─Selection	8000.00	root		having:gt(t.id, 695)
    └─TableFullScan	10000.00	cop[tikv]	table:t	
> EXPLAIN SELECT k, COUNT(*) FROM t GROUP BY k HAVING COUNT(*) > 99 ORDER BY SUM(id) DESC LIMIT 3
id	estRows	task	access object	operator info
Limit	3.00	root		count:3
└─TopN	3.00	root		sum(t.id):desc, count:3
  └─Projection	8000.00	root		t.k, count(1)
    └─Selection	8000.00	root		having:gt(count(1), 99)
      └─HashAgg	10000.00	root		group by:t.k, funcs:count(1), sum(t.id)
        └─TableFullScan	10000.00	cop[tikv]	table:t	
> EXPLAIN SELECT id, ROW_NUMBER() OVER (ORDER BY id DESC) FROM t WHERE id <= 4
id	estRows	task	access object	operator info
Projection	3000.00	root		t.id, window#0
└─Window	3000.00	root		1 calls
  └─TableRangeScan	3000.00	cop[tikv]	table:t, range on primary key	le(t.id, 4)
> EXPLAIN SELECT id FROM t WHERE id IN (SELECT id + 1 FROM t WHERE k = 0) ORDER BY id DESC LIMIT 2
id	estRows	task	access object	operator info
Limit	2.00	root		count:2
└─Projection	10000.00	root		t.id
  └─Apply	10000.00	root		subquery#0:computed once, then:subquery#0
    ├─TableFullScan	10000.00	cop[tikv]	table:t, keep order	desc
    └─Projection	10000.00	root		plus(t.id, 1)
      └─TableFullScan	10000.00	cop[tikv]	table:t	eq(t.k, 0)
> EXPLAIN SELECT * FROM t AS a JOIN t AS b ON a.id = b.k WHERE a.c = 'c1' UNION SELECT 1, 2, 'x', 3, 4, 'y'
id	estRows	task	access object	operator info
Union	10001.00	root		distinct
├─Projection	10000.00	root		a.id, a.k, a.c, b.id, b.k, b.c
│ └─Join	10000.00	root		2 relations, in this order
│   ├─TableFullScan	10000.00	cop[tikv]	table:t	
│   └─Point_Get	10000.00	cop[tikv]	table:t, handle	inner index join, on:and(eq(a.c, "c1"), eq(a.id, b.k))
└─Projection	1.00	root		1, 2, "x", 3, 4, "y"
  └─TableDual	1.00	root		
# ORDER BY under a LIMIT is a TopN: it keeps OFFSET + LIMIT rows, cutting what it holds each
# time it has twice that many (from 1,024 rows on), so these read 5,000 rows and hold few.
> CREATE TABLE t2 (id INT PRIMARY KEY, k INT NOT NULL)
ok 0
> SET cte_max_recursion_depth = 5000
ok 0
> INSERT INTO t2 WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) SELECT i, (i * 7919) % 1000 FROM n
ok 5000
> SELECT id, k FROM t2 ORDER BY k DESC, id LIMIT 4
id	k
321	999
1321	999
2321	999
3321	999
> SELECT id, k FROM t2 ORDER BY k, id DESC LIMIT 3 OFFSET 2000
id	k
4600	400
3600	400
2600	400
> SELECT id FROM t2 ORDER BY k LIMIT 0
id
# A scan under a LIMIT with only the select list between them stops after LIMIT + OFFSET rows,
# and so does the scan of an EXISTS subquery, which needs one row: the Apply's reads are the
# outer range's two rows and the subquery's first.
> EXPLAIN ANALYZE SELECT id FROM t2 WHERE k > 10 LIMIT 2, 3
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Limit	3.00	3	root		time:<t>, loops:2, kv_reads:1, process_keys:5, total_keys:5	offset:2, count:3	N/A	N/A
└─Projection	10000.00	5	root		time:<t>, loops:1, kv_reads:1, process_keys:5, total_keys:5	t2.id	N/A	N/A
  └─TableFullScan	10000.00	5	cop[tikv]	table:t2	time:<t>, loops:1, kv_reads:1, process_keys:5, total_keys:5	gt(t2.k, 10)	N/A	N/A
> EXPLAIN ANALYZE SELECT id FROM t2 WHERE id < 3 AND EXISTS (SELECT * FROM t2 AS x WHERE x.k > 10)
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	3000.00	2	root		time:<t>, loops:2, kv_reads:2, process_keys:3, total_keys:3	t2.id	N/A	N/A
└─Apply	3000.00	2	root		time:<t>, loops:2, kv_reads:2, process_keys:3, total_keys:3	subquery#0:computed once, then:subquery#0	N/A	N/A
  ├─TableRangeScan	3000.00	2	cop[tikv]	table:t2, range on primary key	time:<t>, loops:2, kv_reads:1, process_keys:2, total_keys:2	lt(t2.id, 3)	N/A	N/A
  └─Limit	1.00		root			count:1		
    └─Projection	10000.00		root			t2.id, t2.k		
      └─TableFullScan	10000.00		cop[tikv]	table:t2		gt(t2.k, 10)		
> SELECT k, COUNT(*) FROM t2 GROUP BY k ORDER BY k DESC LIMIT 2
k	COUNT(*)
999	5
998	5
> SELECT id, k FROM t2 ORDER BY k DESC, id LIMIT 1500, 2
id	k
621	699
1621	699
> EXPLAIN SELECT id, k FROM t2 ORDER BY k DESC, id LIMIT 4
id	estRows	task	access object	operator info
Limit	4.00	root		count:4
└─TopN	4.00	root		t2.k:desc, t2.id, count:4
  └─Projection	10000.00	root		t2.id, t2.k
    └─TableFullScan	10000.00	cop[tikv]	table:t2	
# EXPLAIN ANALYZE shows what a sort held and wrote: past 80 % of a 1.5 MiB quota, what it
# holds goes to disk as a run and the rest is merged from memory (EXPLAIN ANALYZE drops the
# rows as they come, as if sent); a TopN holds at most 1,024 rows.
> SET tidb_mem_quota_query = 1572864
ok 0
> EXPLAIN ANALYZE SELECT id, REPEAT('x', 300) FROM t2 ORDER BY k DESC, id
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Sort	10000.00	5000	root		time:<t>, loops:6, kv_reads:5, process_keys:5000, total_keys:5000	t2.k:desc, t2.id	1.20 MB	941.79 KB
└─Projection	10000.00	5000	root		time:<t>, loops:6, kv_reads:5, process_keys:5000, total_keys:5000	t2.id, repeat("x", 300)	N/A	N/A
  └─TableFullScan	10000.00	5000	cop[tikv]	table:t2	time:<t>, loops:6, kv_reads:5, process_keys:5000, total_keys:5000		N/A	N/A
> EXPLAIN ANALYZE SELECT id FROM t2 ORDER BY k DESC, id LIMIT 3
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Limit	3.00	3	root		time:<t>, loops:2, kv_reads:5, process_keys:5000, total_keys:5000	count:3	N/A	N/A
└─TopN	3.00	3	root		time:<t>, loops:1, kv_reads:5, process_keys:5000, total_keys:5000	t2.k:desc, t2.id, count:3	96.00 KB	0 Bytes
  └─Projection	10000.00	5000	root		time:<t>, loops:6, kv_reads:5, process_keys:5000, total_keys:5000	t2.id	N/A	N/A
    └─TableFullScan	10000.00	5000	cop[tikv]	table:t2	time:<t>, loops:6, kv_reads:5, process_keys:5000, total_keys:5000		N/A	N/A
> SET tidb_mem_quota_query = DEFAULT
ok 0
# GROUP BY past the quota: the groups held keep taking their rows, the rows of other groups go
# to 16 partitions on disk, each aggregated alone afterwards; the totals are those of the
# whole grouping. 10,000 wide rows in 4,000 groups of 2 or 3.
> CREATE TABLE t3 (id INT PRIMARY KEY, pad VARCHAR(400))
ok 0
> SET cte_max_recursion_depth = 10000
ok 0
> INSERT INTO t3 WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) SELECT i, REPEAT('p', 300) FROM n
ok 10000
> SELECT COUNT(*), SUM(n), SUM(s), MIN(n), MAX(n), MIN(l) FROM (SELECT id % 4000 AS g, COUNT(*) AS n, SUM(id) AS s, LENGTH(MAX(pad)) AS l FROM t3 GROUP BY g) AS d
COUNT(*)	SUM(n)	SUM(s)	MIN(n)	MAX(n)	MIN(l)
4000	10000	50005000	2	3	300
> SET tidb_mem_quota_query = 1310720
ok 0
> SELECT COUNT(*), SUM(n), SUM(s), MIN(n), MAX(n), MIN(l) FROM (SELECT id % 4000 AS g, COUNT(*) AS n, SUM(id) AS s, LENGTH(MAX(pad)) AS l FROM t3 GROUP BY g) AS d
COUNT(*)	SUM(n)	SUM(s)	MIN(n)	MAX(n)	MIN(l)
4000	10000	50005000	2	3	300
> EXPLAIN ANALYZE SELECT id % 4000 AS g, COUNT(*) AS n, LENGTH(MAX(pad)) AS l FROM t3 GROUP BY g
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	10000.00	4000	root		time:<t>, loops:21, kv_reads:6, process_keys:10000, total_keys:10000	mod(t3.id, 4000), count(1), length(max(t3.pad))	N/A	N/A
└─HashAgg	10000.00	4000	root		time:<t>, loops:21, kv_reads:6, process_keys:10000, total_keys:10000	group by:mod(t3.id, 4000), funcs:count(1), max(t3.pad)	1.25 MB	343.44 KB
  └─TableFullScan	10000.00	10000	cop[tikv]	table:t3	time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000		N/A	N/A
> SELECT id % 4000 AS g, COUNT(*) AS n, SUM(id), LENGTH(MAX(pad)) FROM t3 GROUP BY g ORDER BY n, g DESC LIMIT 3
g	n	SUM(id)	LENGTH(MAX(pad))
3999	2	11998	300
3998	2	11996	300
3997	2	11994	300
# DISTINCT past the quota: keys it holds still drop their repeats, other rows go to 16
# partitions on disk, each made distinct alone: exactly the 4,000 distinct rows leave.
> EXPLAIN ANALYZE SELECT DISTINCT id % 4000, CONCAT(pad, pad) FROM t3
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
HashAgg	10000.00	4000	root		time:<t>, loops:21, kv_reads:6, process_keys:10000, total_keys:10000	distinct	1.25 MB	2.54 MB
└─Projection	10000.00	10000	root		time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000	mod(t3.id, 4000), concat(t3.pad, t3.pad)	N/A	N/A
  └─TableFullScan	10000.00	10000	cop[tikv]	table:t3	time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000		N/A	N/A
> EXPLAIN ANALYZE SELECT DISTINCT id % 4000 FROM t3
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
HashAgg	10000.00	4000	root		time:<t>, loops:6, kv_reads:6, process_keys:10000, total_keys:10000	distinct	35.16 KB	0 Bytes
└─Projection	10000.00	10000	root		time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000	mod(t3.id, 4000)	N/A	N/A
  └─TableFullScan	10000.00	10000	cop[tikv]	table:t3	time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000		N/A	N/A
> SET tidb_mem_quota_query = DEFAULT
ok 0
# A hash join's build side past the quota: its rows and then the rows that probe it go to 16
# partitions on disk by join key, joined a partition at a time (a grace hash join); a derived
# table read first streams. The results are MariaDB 10.11's, as under the default quota.
> CREATE TABLE t4 (id INT PRIMARY KEY, k INT, pad VARCHAR(400))
ok 0
> INSERT INTO t4 SELECT id, IF(id % 10 = 0, NULL, id % 5000), pad FROM t3
ok 10000
> SET tidb_mem_quota_query = 2621440
ok 0
> SELECT COUNT(*), SUM(a.id), SUM(b.id), COUNT(b.id), SUM(LENGTH(b.pad)) FROM t4 a JOIN t4 b ON b.k = a.k
COUNT(*)	SUM(a.id)	SUM(b.id)	COUNT(b.id)	SUM(LENGTH(b.pad))
18000	90000000	90000000	18000	5400000
> SELECT COUNT(*), SUM(a.id), SUM(b.id), COUNT(b.id), SUM(LENGTH(b.pad)) FROM t4 a LEFT JOIN t4 b ON b.k = a.k + 4000
COUNT(*)	SUM(a.id)	SUM(b.id)	COUNT(b.id)	SUM(LENGTH(b.pad))
11800	55405000	25200000	3600	1080000
> SELECT COUNT(*), SUM(a.id), SUM(c.id), COUNT(c.pad) FROM t4 a LEFT JOIN (SELECT k, pad FROM t4 WHERE id % 3 = 0) b ON b.k = a.k LEFT JOIN (SELECT id, k + 1 AS k, CONCAT(pad, id) AS pad FROM t4) c ON c.k = b.k
COUNT(*)	SUM(a.id)	SUM(c.id)	COUNT(c.pad)
15334	76679340	53338012	10668
> SELECT a.id, b.id, c.id FROM t4 a JOIN t4 b ON b.k = a.k JOIN (SELECT id, k + 1 AS k, CONCAT(pad, id) AS pad FROM t4) c ON c.k = b.k ORDER BY a.id DESC, b.id, c.id LIMIT 3
id	id	id
9999	4999	4998
9999	4999	9998
9999	9999	4998
> EXPLAIN ANALYZE SELECT a.id, b.id FROM t4 a JOIN t4 b ON b.k = a.k
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	10000.00	18000	root		time:<t>, loops:33, kv_reads:12, process_keys:20000, total_keys:20000	a.id, b.id	N/A	N/A
└─Join	10000.00	18000	root		time:<t>, loops:33, kv_reads:12, process_keys:20000, total_keys:20000	2 relations, in this order	2.50 MB	5.51 MB
  ├─TableFullScan	10000.00	10000	cop[tikv]	table:t4	loops:1, kv_reads:6, process_keys:10000, total_keys:10000		N/A	N/A
  └─TableFullScan	10000.00	18000	cop[tikv]	table:t4	loops:16, kv_reads:6, process_keys:10000, total_keys:10000	inner hash join, build, on:eq(b.k, a.k)	N/A	N/A
> SET tidb_mem_quota_query = DEFAULT
ok 0
# Windows past the quota: the rows go to disk sorted by the first window's partition and
# order, and come back one partition at a time, which alone is held; each further window
# sorts the rows again with the values computed so far. The results are MariaDB 10.11's. A
# window without PARTITION BY is one partition, which must fit.
> SET tidb_mem_quota_query = 1572864
ok 0
> SELECT COUNT(*), SUM(rn), SUM(rk), SUM(s), SUM(l), SUM(c), SUM(f) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY id % 100 ORDER BY id DESC) AS rn, RANK() OVER (PARTITION BY id % 100 ORDER BY id DESC) AS rk, SUM(id) OVER (PARTITION BY id % 30 ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS s, LAG(id, 3) OVER (PARTITION BY id % 100 ORDER BY id DESC) AS l, COUNT(*) OVER (PARTITION BY id % 70, LENGTH(pad)) AS c, FIRST_VALUE(id) OVER (PARTITION BY k ORDER BY id DESC) AS f FROM t4) AS d
COUNT(*)	SUM(rn)	SUM(rk)	SUM(s)	SUM(l)	SUM(c)	SUM(f)
10000	505000	505000	199121740	49959850	1428580	77500000
> SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC) AS rn, SUM(id) OVER (PARTITION BY id % 30 ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS s, LENGTH(pad) FROM t4 ORDER BY id DESC LIMIT 4
id	k	rn	s	LENGTH(pad)
10000	NULL	1	29910	300
9999	4999	1	29907	300
9998	4998	1	29904	300
9997	4997	1	29901	300
> EXPLAIN ANALYZE SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC), SUM(id) OVER (PARTITION BY id % 30 ORDER BY id), LENGTH(pad) FROM t4
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	10000.00	10000	root		time:<t>, loops:31, kv_reads:6, process_keys:10000, total_keys:10000	t4.id, window#0, window#1, length(t4.pad)	N/A	N/A
└─Window	10000.00	10000	root		time:<t>, loops:31, kv_reads:6, process_keys:10000, total_keys:10000	2 calls	1.50 MB	6.24 MB
  └─TableFullScan	10000.00	10000	cop[tikv]	table:t4	time:<t>, loops:7, kv_reads:6, process_keys:10000, total_keys:10000		N/A	N/A
> SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER (ORDER BY id) AS rn, pad FROM t4) AS d
error 8175 (HY000): Your query has been cancelled due to exceeding the allowed memory limit for a single SQL query. Please try narrowing your query scope or increase the tidb_mem_quota_query limit and try again.[conn=1]
# A nested-loop build side (no equality to hash on) past the quota goes to one file on disk;
# each batch of rows of the steps before is joined with all of it as a block, and a LEFT
# JOIN's rows that matched nothing follow. The results are MariaDB 10.11's.
> SELECT COUNT(*), SUM(a.id), SUM(b.id), SUM(LENGTH(b.pad)) FROM t4 a JOIN t4 b ON b.k < a.id * 40 WHERE a.id <= 100
COUNT(*)	SUM(a.id)	SUM(b.id)	SUM(LENGTH(b.pad))
363600	24361200	1396224000	109080000
> SELECT COUNT(*), SUM(a.id), SUM(b.id), COUNT(b.pad) FROM t4 a LEFT JOIN t4 b ON b.k < a.id * 40 - 3000 WHERE a.id <= 100
COUNT(*)	SUM(a.id)	SUM(b.id)	COUNT(b.pad)
23475	2155650	66456000	23400
> SELECT COUNT(*), SUM(a.id), SUM(b.id), COUNT(b.pad) FROM t4 a LEFT JOIN t4 b ON b.k < a.id * 40 - 3000 AND b.id % 2 = 0 WHERE a.id <= 100 AND (b.id IS NULL OR b.id > 4000)
COUNT(*)	SUM(a.id)	SUM(b.id)	COUNT(b.pad)
5275	481250	27768000	5200
> SELECT a.id, b.id FROM t4 a JOIN t4 b ON b.k > a.id * 49 WHERE a.id <= 100 ORDER BY a.id DESC, b.id LIMIT 3
id	id
100	4901
100	4902
100	4903
> EXPLAIN ANALYZE SELECT a.id, b.id FROM t4 a JOIN t4 b ON b.k < a.id * 40 WHERE a.id <= 100
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	30000000.00	363600	root		time:<t>, loops:357, kv_reads:7, process_keys:10100, total_keys:10100	a.id, b.id	N/A	N/A
└─Join	30000000.00	363600	root		time:<t>, loops:357, kv_reads:7, process_keys:10100, total_keys:10100	2 relations, in this order	1.50 MB	3.03 MB
  ├─TableRangeScan	3000.00	100	cop[tikv]	table:t4, range on primary key	loops:1, kv_reads:1, process_keys:100, total_keys:100	on:le(a.id, 100)	N/A	N/A
  └─TableFullScan	30000000.00	363600	cop[tikv]	table:t4	loops:1, kv_reads:6, process_keys:10000, total_keys:10000	inner nested loop, build, on:lt(b.k, mul(a.id, 40))	N/A	N/A
> SET tidb_mem_quota_query = DEFAULT
ok 0
