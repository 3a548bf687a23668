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
id	task	access object	operator info
Projection	root		t.c
└─Point_Get	cop[tikv]	table:t, handle	eq(t.id, 5)
> EXPLAIN SELECT c FROM t WHERE id IN (1, 2, 3)
id	task	access object	operator info
Projection	root		t.c
└─Batch_Point_Get	cop[tikv]	table:t, 3 keys	in(t.id, 1, 2, 3)
> EXPLAIN SELECT c FROM t WHERE id BETWEEN 10 AND 20 ORDER BY c
id	task	access object	operator info
Sort	root		t.c
└─Projection	root		t.c
  └─TableRangeScan	cop[tikv]	table:t, range on primary key	between(t.id, 10, 20)
> EXPLAIN SELECT id FROM t WHERE k = 5
id	task	access object	operator info
Projection	root		t.id
└─IndexLookUp	cop[tikv]	table:t, index:k_1	eq(t.k, 5)
> EXPLAIN SELECT id FROM t WHERE pad = 'x'
id	task	access object	operator info
Projection	root		t.id
└─TableFullScan	cop[tikv]	table:t	eq(t.pad, "x")
> EXPLAIN SELECT id FROM t ORDER BY id DESC LIMIT 1
id	task	access object	operator info
Limit	root		count:1
└─Projection	root		t.id
  └─TableFullScan	cop[tikv]	table:t, keep order	desc
> EXPLAIN UPDATE t SET k = k + 1 WHERE id = 3
id	task	access object	operator info
Update	root		
└─Point_Get	cop[tikv]	table:t, handle	eq(t.id, 3)
> EXPLAIN DELETE FROM t WHERE k > 10
id	task	access object	operator info
Delete	root		
└─IndexLookUp	cop[tikv]	table:t, index:k_1	gt(t.k, 10)
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 ORDER BY o_id LIMIT 1
id	task	access object	operator info
Limit	root		count:1
└─Projection	root		o.o_id
  └─TableRangeScan	cop[tikv]	table:o, range on primary key, keep order	and(eq(o.w, 1), eq(o.d, 2))
> EXPLAIN SELECT o_id FROM o WHERE (w, d, o_id) IN ((1, 1, 1), (1, 1, 2))
id	task	access object	operator info
Projection	root		o.o_id
└─Batch_Point_Get	cop[tikv]	table:o, 2 keys	in((o.w, o.d, o.o_id), 2 tuples)
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 AND c_id = 3
id	task	access object	operator info
Projection	root		o.o_id
└─IndexLookUp	cop[tikv]	table:o, index:idx_c	and(eq(o.w, 1), and(eq(o.d, 2), eq(o.c_id, 3)))
> EXPLAIN SELECT o_id FROM o WHERE w = 1 AND d = 2 AND o_id = 3
id	task	access object	operator info
Projection	root		o.o_id
└─Point_Get	cop[tikv]	table:o, handle	and(eq(o.w, 1), and(eq(o.d, 2), eq(o.o_id, 3)))
# With statistics, a range of one primary-key value beats a low-selectivity index.
> INSERT INTO t (k) VALUES (1), (1), (1), (1), (1), (1), (1), (1)
ok 8 last_insert_id=1
> ANALYZE TABLE t
Table	Op	Msg_type	Msg_text
p.t	analyze	status	OK
> EXPLAIN SELECT c FROM t WHERE k = 1 AND id BETWEEN 1 AND 2
id	task	access object	operator info
Projection	root		t.c
└─TableRangeScan	cop[tikv]	table:t, range on primary key	and(eq(t.k, 1), between(t.id, 1, 2))
> EXPLAIN SELECT c FROM t WHERE k = 1 AND id > 2
id	task	access object	operator info
Projection	root		t.c
└─TableRangeScan	cop[tikv]	table:t, range on primary key	and(eq(t.k, 1), gt(t.id, 2))
