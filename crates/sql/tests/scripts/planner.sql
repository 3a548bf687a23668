# Access paths chosen for the shapes sysbench and TPC-C use.
> CREATE DATABASE p
ok 1
> USE p
ok 0
> CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT, k INT DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))
ok 0
> CREATE INDEX k_1 ON t(k)
ok 0
> CREATE TABLE o (w INT NOT NULL, d INT NOT NULL, o_id INT NOT NULL, c_id INT, PRIMARY KEY (w, d, o_id), KEY idx_c (w, d, c_id))
ok 0
> EXPLAIN SELECT c FROM t WHERE id = 5
id	estRows	task	access object	operator info
Projection	1.00	root		t.c
└─Point_Get	1.00	cop[tikv]	table:t, handle	eq(t.id, 5)
> EXPLAIN SELECT c FROM t WHERE id IN (1, 2, 3)
id	estRows	task	access object	operator info
Projection	3.00	root		t.c
└─Batch_Point_Get	3.00	cop[tikv]	table:t, 3 keys	in(t.id, 1, 2, 3)
> EXPLAIN SELECT c FROM t WHERE id BETWEEN 10 AND 20 ORDER BY c
id	estRows	task	access object	operator info
Sort	11.00	root		t.c
└─Projection	11.00	root		t.c
  └─TableRangeScan	11.00	cop[tikv]	table:t, range on primary key	between(t.id, 10, 20)
> EXPLAIN SELECT id FROM t WHERE k = 5
id	estRows	task	access object	operator info
Projection	1000.00	root		t.id
└─IndexLookUp	1000.00	cop[tikv]	table:t, index:k_1	eq(t.k, 5)
> EXPLAIN SELECT id FROM t WHERE pad = 'x'
id	estRows	task	access object	operator info
Projection	10000.00	root		t.id
└─TableFullScan	10000.00	cop[tikv]	table:t	eq(t.pad, "x")
> EXPLAIN SELECT id FROM t ORDER BY id DESC LIMIT 1
id	estRows	task	access object	operator info
Limit	1.00	root		count:1
└─Projection	10000.00	root		t.id
  └─TableFullScan	10000.00	cop[tikv]	table:t, keep order	desc
> EXPLAIN UPDATE t SET k = k + 1 WHERE id = 3
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:t, handle	eq(t.id, 3)
> EXPLAIN DELETE FROM t WHERE k > 10
id	estRows	task	access object	operator info
Delete	N/A	root		
└─IndexLookUp	3000.00	cop[tikv]	table:t, index:k_1	gt(t.k, 10)
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 ORDER BY o_id LIMIT 1
id	estRows	task	access object	operator info
Limit	1.00	root		count:1
└─Projection	100.00	root		o.o_id
  └─TableRangeScan	100.00	cop[tikv]	table:o, range on primary key, keep order	and(eq(o.w, 1), eq(o.d, 2))
> EXPLAIN SELECT o_id FROM o WHERE (w, d, o_id) IN ((1, 1, 1), (1, 1, 2))
id	estRows	task	access object	operator info
Projection	2.00	root		o.o_id
└─Batch_Point_Get	2.00	cop[tikv]	table:o, 2 keys	in((o.w, o.d, o.o_id), 2 tuples)
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 AND c_id = 3
id	estRows	task	access object	operator info
Projection	10.00	root		o.o_id
└─IndexLookUp	10.00	cop[tikv]	table:o, index:idx_c	and(eq(o.w, 1), and(eq(o.d, 2), eq(o.c_id, 3)))
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 AND o_id = 3
id	estRows	task	access object	operator info
Projection	1.00	root		o.o_id
└─Point_Get	1.00	cop[tikv]	table:o, handle	and(eq(o.w, 1), and(eq(o.d, 2), eq(o.o_id, 3)))
# With statistics, a range of one primary-key value beats a low-selectivity index.
> INSERT INTO t (k) VALUES (1), (1), (1), (1), (1), (1), (1), (1)
ok 8 last_insert_id=1
> ANALYZE TABLE t
Table	Op	Msg_type	Msg_text
p.t	analyze	status	OK
> EXPLAIN SELECT c FROM t WHERE k = 1 AND id BETWEEN 1 AND 2
id	estRows	task	access object	operator info
Projection	0.40	root		t.c
└─TableRangeScan	0.40	cop[tikv]	table:t, range on primary key	and(eq(t.k, 1), between(t.id, 1, 2))
> EXPLAIN SELECT c FROM t WHERE k = 1 AND id > 2
id	estRows	task	access object	operator info
Projection	2.40	root		t.c
└─TableRangeScan	2.40	cop[tikv]	table:t, range on primary key	and(eq(t.k, 1), gt(t.id, 2))
# A WHERE of literals is decided when planned: one that cannot hold reads nothing (TiDB's
# TableDual with no rows), one that holds is dropped; an aggregate still makes its one row.
> EXPLAIN SELECT c FROM t WHERE 1 = 0
id	estRows	task	access object	operator info
Projection	0.00	root		#2
└─TableDual	0.00	root		0
> EXPLAIN SELECT COUNT(*), MAX(k) FROM t WHERE k = 1 AND FALSE
id	estRows	task	access object	operator info
Projection	1.00	root		count(1), max(#1)
└─HashAgg	1.00	root		funcs:count(1), max(#1)
  └─TableDual	0.00	root		0
> SELECT COUNT(*), MAX(k) FROM t WHERE k = 1 AND FALSE
COUNT(*)	MAX(k)
0	NULL
> SELECT COUNT(*), MAX(k) FROM t WHERE k = 1 AND NULL
COUNT(*)	MAX(k)
0	NULL
> SELECT id, k FROM t WHERE 0 ORDER BY id
id	k
> SELECT k, COUNT(*) FROM t WHERE 1 <> 1 GROUP BY k
k	COUNT(*)
> EXPLAIN SELECT c FROM t WHERE id = 3 AND 1 = 1
id	estRows	task	access object	operator info
Projection	1.00	root		t.c
└─Point_Get	1.00	cop[tikv]	table:t, handle	eq(t.id, 3)
> SELECT COUNT(*) FROM t WHERE 1 = 1 AND TRUE AND NOT 0
COUNT(*)
8
> SELECT COUNT(*) FROM t a JOIN t b ON a.id = b.id WHERE 2 < 1
COUNT(*)
0
> SELECT COUNT(*) FROM t a LEFT JOIN t b ON a.id = b.id AND 1 = 0 WHERE b.id IS NULL
COUNT(*)
8
# GROUP_CONCAT's ORDER BY reads its column even when nothing else does.
> UPDATE t SET c = CONCAT('c', 10 - id) WHERE id < 4
ok 3 (Rows matched: 3  Changed: 3  Warnings: 0)
> SELECT GROUP_CONCAT(id ORDER BY c) FROM t WHERE id < 4
GROUP_CONCAT(id ORDER BY c)
3,2,1
