# Joins, derived tables and subqueries, in the shapes TPC-C and its consistency checks use.
> CREATE DATABASE j
ok 1
> USE j
ok 0
> CREATE TABLE warehouse (w_id INT NOT NULL, w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id))
ok 0
> CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_ytd DECIMAL(12,2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id))
ok 0
> CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_last VARCHAR(16), c_first VARCHAR(16), c_balance DECIMAL(12,2), c_discount DECIMAL(4,4), PRIMARY KEY (c_w_id, c_d_id, c_id), INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))
ok 0
> CREATE TABLE orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_carrier_id INT, o_ol_cnt INT, PRIMARY KEY (o_w_id, o_d_id, o_id), INDEX idx_order (o_w_id, o_d_id, o_c_id, o_id))
ok 0
> CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))
ok 0
> CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, ol_amount DECIMAL(6,2), ol_delivery_d DATETIME, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))
ok 0
> CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, PRIMARY KEY (s_w_id, s_i_id))
ok 0
> CREATE TABLE history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL, h_amount DECIMAL(6,2), INDEX idx_h_c_w_id (h_c_w_id))
ok 0
> INSERT INTO warehouse VALUES (1, 0.1000, 300.00), (2, 0.2000, 100.00)
ok 2
> INSERT INTO district VALUES (1, 1, 100.00, 4), (2, 1, 200.00, 3), (1, 2, 100.00, 1)
ok 3
> INSERT INTO customer VALUES (1, 1, 1, 'BAR', 'ann', -10.00, 0.0500), (2, 1, 1, 'BAR', 'bob', 5.00, 0.1000), (3, 2, 1, 'OUGHT', 'cy', 0.00, 0.2000), (1, 1, 2, 'ABLE', 'dee', 0.00, 0.0000)
ok 4
> INSERT INTO orders VALUES (1, 1, 1, 1, 5, 2), (2, 1, 1, 2, NULL, 1), (3, 1, 1, 1, NULL, 3), (1, 2, 1, 3, 7, 1), (2, 2, 1, 3, NULL, 2)
ok 5
> INSERT INTO new_order VALUES (2, 1, 1), (3, 1, 1), (2, 2, 1)
ok 3
> INSERT INTO order_line VALUES (1, 1, 1, 1, 10, 1.50, '2024-01-01 00:00:00'), (1, 1, 1, 2, 11, 2.25, '2024-01-01 00:00:00'), (2, 1, 1, 1, 10, 3.00, NULL), (3, 1, 1, 1, 12, 4.00, NULL), (3, 1, 1, 2, 13, 1.00, NULL), (1, 2, 1, 1, 12, 9.99, '2024-01-02 00:00:00'), (2, 2, 1, 1, 10, 0.01, NULL)
ok 7
> INSERT INTO stock VALUES (10, 1, 5), (11, 1, 50), (12, 1, 15), (13, 1, 8), (10, 2, 1)
ok 5
> INSERT INTO history VALUES (1, 1, 1, 10.00), (1, 1, 1, 5.00), (3, 2, 1, 2.50)
ok 3

# New-Order: implicit join of customer and warehouse; the warehouse point get comes first.
> SELECT c_discount, c_last, w_tax FROM customer, warehouse WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 2
c_discount	c_last	w_tax
0.1000	BAR	0.1000
> EXPLAIN SELECT c_discount, c_last, w_tax FROM customer, warehouse WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Projection	1.00	root		customer.c_discount, customer.c_last, warehouse.w_tax
└─Join	1.00	root		2 relations, in this order
  ├─Point_Get	1.00	cop[tikv]	table:warehouse, handle	on:eq(warehouse.w_id, 1)
  └─Point_Get	1.00	cop[tikv]	table:customer, handle	inner index join, on:and(eq(customer.c_w_id, warehouse.w_id), and(eq(customer.c_d_id, 1), eq(customer.c_id, 2)))

# Order-Status: customers by last name and their newest order go through the secondary indexes.
> EXPLAIN SELECT c_balance, c_first, c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BAR' ORDER BY c_first
id	estRows	task	access object	operator info
Sort	10.00	root		customer.c_first
└─Projection	10.00	root		customer.c_balance, customer.c_first, customer.c_id
  └─IndexLookUp	10.00	cop[tikv]	table:customer, index:idx_customer	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_last, "BAR")))
> SELECT c_balance, c_first, c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BAR' ORDER BY c_first
c_balance	c_first	c_id
-10.00	ann	1
5.00	bob	2
> EXPLAIN SELECT o_id, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = 1 ORDER BY o_id DESC LIMIT 1
id	estRows	task	access object	operator info
Limit	1.00	root		count:1
└─TopN	1.00	root		orders.o_id:desc, count:1
  └─Projection	10.00	root		orders.o_id, orders.o_carrier_id
    └─IndexLookUp	10.00	cop[tikv]	table:orders, index:idx_order	and(eq(orders.o_w_id, 1), and(eq(orders.o_d_id, 1), eq(orders.o_c_id, 1)))
> SELECT o_id, o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = 1 ORDER BY o_id DESC LIMIT 1
o_id	o_carrier_id
3	NULL
> START TRANSACTION WITH CONSISTENT SNAPSHOT
ok 0
> SELECT COUNT(*) FROM orders
COUNT(*)
5
> COMMIT
ok 0
> START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY
ok 0
> ROLLBACK
ok 0

# Stock-Level: order_line joined to stock by key, with the hint comment accepted.
> SELECT /*+ TIDB_INLJ(order_line,stock) */ COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND ol_o_id >= 4 - 20 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 20
stock_count
3
> EXPLAIN SELECT COUNT(DISTINCT (s_i_id)) FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 20
id	estRows	task	access object	operator info
Projection	1.00	root		count(distinct stock.s_i_id)
└─HashAgg	1.00	root		funcs:count(distinct stock.s_i_id)
  └─Join	30.00	root		2 relations, in this order
    ├─TableRangeScan	30.00	cop[tikv]	table:order_line, range on primary key	on:and(eq(order_line.ol_w_id, 1), and(eq(order_line.ol_d_id, 1), lt(order_line.ol_o_id, 4)))
    └─Point_Get	30.00	cop[tikv]	table:stock, handle	inner index join, on:and(eq(stock.s_w_id, 1), and(eq(stock.s_i_id, order_line.ol_i_id), lt(stock.s_quantity, 20)))

# Explicit INNER JOIN … ON, aliases, qualified wildcards, and a join on a non-key column.
> SELECT o.o_id, c.c_last FROM orders o INNER JOIN customer c ON c.c_w_id = o.o_w_id AND c.c_d_id = o.o_d_id AND c.c_id = o.o_c_id WHERE o.o_w_id = 1 ORDER BY o.o_d_id, o.o_id
o_id	c_last
1	BAR
2	BAR
3	BAR
1	OUGHT
2	OUGHT
> SELECT w.*, d.d_id FROM warehouse AS w JOIN district d ON d.d_w_id = w.w_id ORDER BY w.w_id, d.d_id
w_id	w_tax	w_ytd	d_id
1	0.1000	300.00	1
1	0.1000	300.00	2
2	0.2000	100.00	1
> SELECT a.c_id, b.c_id FROM customer a, customer b WHERE a.c_last = b.c_last AND a.c_id < b.c_id
c_id	c_id
1	2
> SELECT COUNT(*) FROM warehouse, district
COUNT(*)
6
> SELECT c_id FROM customer, orders WHERE c_id = 1
c_id
1
1
1
1
1
1
1
1
1
1
> SELECT w_id FROM warehouse, district WHERE d_w_id = w_id AND w_ytd <> d_ytd ORDER BY 1
w_id
1
1

# 3.3.2.1: W_YTD = sum(D_YTD), grouped over a join.
> SELECT d_w_id, sum(d_ytd) - max(w_ytd) diff FROM district, warehouse WHERE d_w_id = w_id GROUP BY d_w_id ORDER BY d_w_id
d_w_id	diff
1	0.00
2	0.00

# LEFT JOIN pads with NULLs; WHERE on the right side runs after the padding.
> SELECT o_id, o_d_id, no_o_id FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id WHERE o_w_id = 1 ORDER BY o_d_id, o_id
o_id	o_d_id	no_o_id
1	1	NULL
2	1	2
3	1	3
1	2	NULL
2	2	2
> SELECT o_id, o_d_id FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id WHERE no_o_id IS NULL AND o_carrier_id IS NULL
o_id	o_d_id
> SELECT w_id, d_id FROM warehouse LEFT JOIN district ON d_w_id = w_id AND d_ytd > 150 ORDER BY w_id
w_id	d_id
1	2
2	NULL

# Derived tables joined by hash, with COALESCE for groups that have no rows.
> SELECT d.d_w_id, d.d_id, d.d_next_o_id - 1 - COALESCE(o.max_o, 0) gap FROM district d LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) max_o FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id ORDER BY 1, 2
d_w_id	d_id	gap
1	1	0
1	2	0
2	1	0
> SELECT o.o_d_id, o.cnt, l.cnt FROM (SELECT o_d_id, SUM(o_ol_cnt) cnt FROM orders WHERE o_w_id = 1 GROUP BY o_d_id) o, (SELECT ol_d_id, COUNT(*) cnt FROM order_line WHERE ol_w_id = 1 GROUP BY ol_d_id) l WHERE o.o_d_id = l.ol_d_id ORDER BY 1
o_d_id	cnt	cnt
1	6	5
2	3	2
> EXPLAIN SELECT o.o_d_id FROM (SELECT o_d_id, SUM(o_ol_cnt) cnt FROM orders GROUP BY o_d_id) o, (SELECT ol_d_id, COUNT(*) cnt FROM order_line GROUP BY ol_d_id) l WHERE o.o_d_id = l.ol_d_id
id	estRows	task	access object	operator info
Projection	1000.00	root		o.o_d_id
└─Join	1000.00	root		2 relations, in this order
  ├─Derived	1000.00	root	derived:o	inner nested loop, build
  │ └─Projection	10000.00	root		orders.o_d_id, sum(orders.o_ol_cnt)
  │   └─HashAgg	10000.00	root		group by:orders.o_d_id, funcs:sum(orders.o_ol_cnt)
  │     └─TableFullScan	10000.00	cop[tikv]	table:orders	
  └─Derived	1000.00	root	derived:l	inner hash join, build, on:eq(o.o_d_id, l.ol_d_id)
    └─Projection	10000.00	root		order_line.ol_d_id, count(1)
      └─HashAgg	10000.00	root		group by:order_line.ol_d_id, funcs:count(1)
        └─TableFullScan	10000.00	cop[tikv]	table:order_line	
# A join on no equality reads its inner table once and compares its rows in memory (MySQL's
# join buffer), not read again for every outer row.
> SELECT COUNT(*) FROM customer c JOIN district d ON c.c_id < d.d_id
COUNT(*)
2
> EXPLAIN SELECT COUNT(*) FROM customer c JOIN district d ON c.c_id < d.d_id
id	estRows	task	access object	operator info
Projection	1.00	root		count(1)
└─HashAgg	1.00	root		funcs:count(1)
  └─Join	100000000.00	root		2 relations, in this order
    ├─TableFullScan	10000.00	cop[tikv]	table:customer	
    └─TableFullScan	100000000.00	cop[tikv]	table:district	inner nested loop, build, on:lt(c.c_id, d.d_id)
> SELECT POWER(3 - 1, 2), x FROM (SELECT 7 x) t
POWER(3 - 1, 2)	x
4	7
> SELECT * FROM (SELECT c_id FROM customer) AS t WHERE t.c_id > 2
c_id
3
> SELECT * FROM (SELECT c_id FROM customer)
error 1248 (42000): Every derived table must have its own alias
> SELECT * FROM (SELECT c_id, c_id FROM customer) t
error 1060 (42S21): Duplicate column name 'c_id'

# Correlated scalar subqueries: C_BALANCE against delivered order lines and payments, for every
# customer, including those with no delivered order line or no payment.
> SELECT c_w_id, c_d_id, c_id, c_balance, (SELECT COALESCE(SUM(ol_amount), 0) FROM orders, order_line WHERE o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id AND ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id AND ol_delivery_d IS NOT NULL) delivered, (SELECT COALESCE(SUM(h_amount), 0) FROM history WHERE h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id) paid FROM customer ORDER BY 1, 2, 3
c_w_id	c_d_id	c_id	c_balance	delivered	paid
1	1	1	-10.00	3.75	15.00
1	1	2	5.00	0.00	0.00
1	2	3	0.00	9.99	2.50
2	1	1	0.00	0.00	0.00
> SELECT c_id FROM customer WHERE c_balance <> (SELECT COALESCE(SUM(h_amount), 0) FROM history WHERE h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id) ORDER BY c_w_id, c_id
c_id
1
2
3
> SELECT c_id FROM customer c WHERE EXISTS (SELECT 1 FROM orders WHERE o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) ORDER BY c_w_id, c_d_id, c_id
c_id
1
2
3
> SELECT c_id FROM customer c WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = c.c_w_id AND o_d_id = c.c_d_id AND o_c_id = c.c_id) ORDER BY c_w_id, c_d_id, c_id
c_id
1
> SELECT s_i_id FROM stock WHERE s_w_id = 1 AND s_i_id IN (SELECT ol_i_id FROM order_line WHERE ol_amount > 3) ORDER BY 1
s_i_id
12
> SELECT s_i_id FROM stock WHERE s_w_id = 1 AND s_i_id NOT IN (SELECT ol_i_id FROM order_line) ORDER BY 1
s_i_id
> SELECT (SELECT MAX(w_ytd) FROM warehouse) AS top_ytd, (SELECT COUNT(*) FROM stock WHERE s_quantity < 10) low_stock
top_ytd	low_stock
300.00	3
> SELECT c_id FROM customer WHERE c_balance = (SELECT MIN(c_balance) FROM customer)
c_id
1
> SELECT (SELECT c_id FROM customer)
error 1242 (21000): Subquery returns more than 1 row
> SELECT (SELECT c_id, c_d_id FROM customer WHERE c_id = 3)
error 1241 (21000): Operand should contain 1 column(s)
> SELECT c_id FROM customer WHERE c_id IN (SELECT c_id, c_d_id FROM customer)
error 1241 (21000): Operand should contain 1 column(s)
> SELECT c_id FROM customer c WHERE c_id = (SELECT MAX(o_c_id) FROM orders WHERE o_w_id = c.no_such_column)
error 1054 (42S22): Unknown column 'c.no_such_column' in 'where clause'
> EXPLAIN SELECT c_id FROM customer c WHERE EXISTS (SELECT 1 FROM orders WHERE o_w_id = c.c_w_id)
id	estRows	task	access object	operator info
Projection	10000.00	root		customer.c_id
└─Apply	10000.00	root		subquery#0:correlated, then:subquery#0
  ├─TableFullScan	10000.00	cop[tikv]	table:customer	
  └─Limit	1.00	root		count:1
    └─Projection	1000.00	root		1
      └─TableRangeScan	1000.00	cop[tikv]	table:orders, range on primary key	eq(orders.o_w_id, outer#2)

# Delivery: tuple IN lists on a primary-key prefix read one key range per tuple.
> EXPLAIN SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 2), (1, 2, 2), (1, 1, 0)) GROUP BY ol_d_id
id	estRows	task	access object	operator info
Projection	30.00	root		order_line.ol_d_id, sum(order_line.ol_amount)
└─HashAgg	30.00	root		group by:order_line.ol_d_id, funcs:sum(order_line.ol_amount)
  └─TableRangeScan	30.00	cop[tikv]	table:order_line, 3 primary-key prefixes	in((order_line.ol_w_id, order_line.ol_d_id, order_line.ol_o_id), 3 tuples)
> SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2)) GROUP BY ol_d_id ORDER BY 1
ol_d_id	SUM(ol_amount)
1	3.00
2	0.01
> UPDATE order_line SET ol_delivery_d = '2024-02-02 10:00:00' WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 3), (1, 1, 0))
ok 2 (Rows matched: 2  Changed: 2  Warnings: 0)
> SELECT ol_o_id, ol_number, ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 ORDER BY 1, 2
ol_o_id	ol_number	ol_delivery_d
1	1	2024-01-01 00:00:00
1	2	2024-01-01 00:00:00
2	1	NULL
3	1	2024-02-02 10:00:00
3	2	2024-02-02 10:00:00
> DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ((1, 1, 3), (1, 2, 2))
ok 2
> SELECT * FROM new_order
no_o_id	no_d_id	no_w_id
2	1	1

# An inner join's ON waits for both sides whatever order the planner picks.
> CREATE TABLE a (id INT PRIMARY KEY, v INT)
ok 0
> CREATE TABLE b (id INT PRIMARY KEY, a_id INT)
ok 0
> INSERT INTO a VALUES (1, 10), (2, 20)
ok 2
> INSERT INTO b VALUES (5, 1), (6, 2)
ok 2
> SELECT a.v FROM a JOIN b ON b.a_id = a.id WHERE b.id = 5
v
10
> SELECT a.v, b.id FROM a JOIN b ON a.id = b.id - 4 WHERE a.id = 1 AND b.id = 5
v	id
10	5
> SELECT a.v FROM a INNER JOIN b ON b.a_id = a.id LEFT JOIN customer ON c_id = b.id ORDER BY a.v
v
10
20

# NULL and empty sets in IN subqueries; a later IN may compare an earlier subquery's value.
> SELECT NULL IN (SELECT id FROM a WHERE id > 100), NULL NOT IN (SELECT id FROM a WHERE id > 100), NULL IN (SELECT id FROM a)
NULL IN (SELECT id FROM a WHERE id > 100)	NULL NOT IN (SELECT id FROM a WHERE id > 100)	NULL IN (SELECT id FROM a)
0	1	NULL
> SELECT 1 FROM a WHERE (SELECT MAX(a_id) FROM b) IN (SELECT id FROM a) AND id = 1
1
1

# A number in HAVING is a value.
> SELECT v FROM a GROUP BY v HAVING 1 ORDER BY v
v
10
20
> SELECT v FROM a GROUP BY v HAVING 0
v

# Hash joins match values that compare equal across types: dates and strings, numbers and text.
> CREATE TABLE d (id INT PRIMARY KEY, day DATE, n INT)
ok 0
> CREATE TABLE e (id INT PRIMARY KEY, s VARCHAR(20))
ok 0
> INSERT INTO d VALUES (1, '2024-01-01', 7), (2, '2024-01-02', 8)
ok 2
> INSERT INTO e VALUES (1, '2024-01-02'), (2, '7'), (3, '2024-01-01 00:00:00')
ok 3
> SELECT e.id, d.id FROM e, d WHERE d.day = e.s ORDER BY 1
id	id
1	2
3	1
> SELECT e.id, d.id FROM e, d WHERE d.n = e.s ORDER BY 1
id	id
2	1
> SELECT COUNT(*) FROM a, a
error 1066 (42000): Not unique table/alias: 'a'
> SELECT COUNT(*) FROM a x, a X
error 1066 (42000): Not unique table/alias: 'X'

# Joins through more rows than one batch of primary-key lookups (1024 rows): every row
# of big is looked up in half, in batches.
> CREATE TABLE big (id INT PRIMARY KEY, v INT)
ok 0
> INSERT INTO big VALUES (1, 1)
ok 1
> INSERT INTO big SELECT id + 1, v + 1 FROM big
ok 1
> INSERT INTO big SELECT id + 2, v + 2 FROM big
ok 2
> INSERT INTO big SELECT id + 4, v + 4 FROM big
ok 4
> INSERT INTO big SELECT id + 8, v + 8 FROM big
ok 8
> INSERT INTO big SELECT id + 16, v + 16 FROM big
ok 16
> INSERT INTO big SELECT id + 32, v + 32 FROM big
ok 32
> INSERT INTO big SELECT id + 64, v + 64 FROM big
ok 64
> INSERT INTO big SELECT id + 128, v + 128 FROM big
ok 128
> INSERT INTO big SELECT id + 256, v + 256 FROM big
ok 256
> INSERT INTO big SELECT id + 512, v + 512 FROM big
ok 512
> INSERT INTO big SELECT id + 1024, v + 1024 FROM big
ok 1024
> INSERT INTO big SELECT id + 2048, v + 2048 FROM big WHERE id <= 952
ok 952
> CREATE TABLE half (id INT PRIMARY KEY, w INT)
ok 0
> INSERT INTO half SELECT id, id * 2 FROM big WHERE id % 2 = 0
ok 1500
> SELECT COUNT(*), COUNT(h.id), SUM(h.w), MIN(b.id), MAX(b.id) FROM big b LEFT JOIN half h ON h.id = b.id
COUNT(*)	COUNT(h.id)	SUM(h.w)	MIN(b.id)	MAX(b.id)
3000	1500	4503000	1	3000
> SELECT b.id, h.w FROM big b LEFT JOIN half h ON h.id = b.id WHERE b.id > 2995
id	w
2996	5992
2997	NULL
2998	5996
2999	NULL
3000	6000
> SELECT b.id, h.w FROM big b JOIN half h ON h.id = b.id WHERE h.w > 5980
id	w
2992	5984
2994	5988
2996	5992
2998	5996
3000	6000
> SELECT COUNT(*), SUM(a.v + b.v + h.w) FROM big a JOIN big b ON b.id = a.id JOIN half h ON h.id = b.id
COUNT(*)	SUM(a.v + b.v + h.w)
1500	9006000
> SELECT COUNT(*) FROM big a LEFT JOIN half h ON h.id = a.id + 1 WHERE h.id IS NULL
COUNT(*)
1500
> CREATE TABLE lines (id INT, n INT, amount INT, PRIMARY KEY (id, n))
ok 0
> INSERT INTO lines SELECT id, 1, id FROM big WHERE id % 3 = 0
ok 1000
> INSERT INTO lines SELECT id, 2, 1 FROM big WHERE id % 6 = 0
ok 500
> EXPLAIN SELECT COUNT(*) FROM big b LEFT JOIN lines l ON l.id = b.id
id	estRows	task	access object	operator info
Projection	1.00	root		count(1)
└─HashAgg	1.00	root		funcs:count(1)
  └─Join	10000000.00	root		2 relations, in this order
    ├─TableFullScan	10000.00	cop[tikv]	table:big	
    └─TableRangeScan	10000000.00	cop[tikv]	table:lines, range on primary key	left outer index join, on:eq(l.id, b.id)
> SELECT COUNT(*), COUNT(l.n), SUM(l.amount) FROM big b LEFT JOIN lines l ON l.id = b.id
COUNT(*)	COUNT(l.n)	SUM(l.amount)
3500	1500	1502000
> SELECT b.id, l.n, l.amount FROM big b JOIN lines l ON l.id = b.id WHERE b.id > 2990
id	n	amount
2991	1	2991
2994	1	2994
2994	2	1
2997	1	2997
3000	1	3000
3000	2	1
> CREATE TABLE refs (id INT PRIMARY KEY, big_id INT, KEY (big_id))
ok 0
> INSERT INTO refs SELECT id, id % 1500 + 1 FROM big
ok 3000
> EXPLAIN SELECT COUNT(*) FROM big b LEFT JOIN refs r ON r.big_id = b.id
id	estRows	task	access object	operator info
Projection	1.00	root		count(1)
└─HashAgg	1.00	root		funcs:count(1)
  └─Join	20000000.00	root		2 relations, in this order
    ├─TableFullScan	10000.00	cop[tikv]	table:big	
    └─IndexLookUp	20000000.00	cop[tikv]	table:refs, index:big_id	left outer index join, on:eq(r.big_id, b.id)
> SELECT COUNT(*), COUNT(r.id), SUM(r.id) FROM big b LEFT JOIN refs r ON r.big_id = b.id
COUNT(*)	COUNT(r.id)	SUM(r.id)
4500	3000	4501500
> SELECT b.id, r.id FROM big b JOIN refs r ON r.big_id = b.id WHERE b.id < 3
id	id
2	1
1	1500
2	1501
1	3000
> BEGIN
ok 0
> INSERT INTO lines VALUES (1, 1, 100), (3, 3, 7)
ok 2
> DELETE FROM lines WHERE id = 6 AND n = 2
ok 1
> INSERT INTO refs VALUES (5000, 2999)
ok 1
> SELECT b.id, l.n, l.amount FROM big b JOIN lines l ON l.id = b.id WHERE b.id <= 6
id	n	amount
1	1	100
3	1	3
3	3	7
6	1	6
> SELECT b.id, r.id FROM big b LEFT JOIN refs r ON r.big_id = b.id WHERE b.id > 2998
id	id
2999	5000
3000	NULL
> ROLLBACK
ok 0
> SELECT COUNT(*), SUM(l.amount) FROM big b JOIN lines l ON l.id = b.id WHERE b.id <= 6
COUNT(*)	SUM(l.amount)
3	10

# EXISTS stops at the subquery's first row (unless it has a LIMIT of its own).
> SELECT COUNT(*) FROM half h WHERE EXISTS (SELECT * FROM big b WHERE b.id >= h.id)
COUNT(*)
1500
> SELECT h.id FROM half h WHERE NOT EXISTS (SELECT * FROM big b WHERE b.id > h.id)
id
3000
> SELECT EXISTS (SELECT COUNT(*) FROM big WHERE id < 0), EXISTS (SELECT id FROM big WHERE id < 0)
EXISTS (SELECT COUNT(*) FROM big WHERE id < 0)	EXISTS (SELECT id FROM big WHERE id < 0)
1	0
> SELECT EXISTS (SELECT id FROM big LIMIT 5 OFFSET 2999), EXISTS (SELECT id FROM big LIMIT 5 OFFSET 3000)
EXISTS (SELECT id FROM big LIMIT 5 OFFSET 2999)	EXISTS (SELECT id FROM big LIMIT 5 OFFSET 3000)
1	0

# Errors.
> SELECT c_id FROM customer, orders
c_id
1
1
1
1
1
2
2
2
2
2
3
3
3
3
3
1
1
1
1
1
> SELECT w_id FROM warehouse, district FOR UPDATE
error 1235 (42000): This version of Strata doesn't yet support 'FOR UPDATE with joins, derived tables or subqueries'
> SELECT * FROM warehouse w1 JOIN warehouse w2 USING (w_id)
w_id	w_tax	w_ytd	w_tax	w_ytd
1	0.1000	300.00	0.1000	300.00
2	0.2000	100.00	0.2000	100.00
# USING and NATURAL joins merge each pair of equal columns into one: listed first by `*`,
# reached unqualified, the left side's (a RIGHT JOIN's right side's) value.
> CREATE TABLE ua (x INT, id INT PRIMARY KEY)
ok 0
> CREATE TABLE ub (id INT PRIMARY KEY, y INT)
ok 0
> CREATE TABLE uc (id INT PRIMARY KEY, z INT)
ok 0
> INSERT INTO ua VALUES (10, 1), (20, 2), (30, 3)
ok 3
> INSERT INTO ub VALUES (2, 200), (3, 300), (4, 400)
ok 3
> INSERT INTO uc VALUES (3, 3000), (4, 4000)
ok 2
> SELECT * FROM ua JOIN ub USING (id) ORDER BY id
id	x	y
2	20	200
3	30	300
> SELECT * FROM ua LEFT JOIN ub USING (id) ORDER BY id
id	x	y
1	10	NULL
2	20	200
3	30	300
> SELECT * FROM ua RIGHT JOIN ub USING (id) ORDER BY id
id	y	x
2	200	20
3	300	30
4	400	NULL
> SELECT id, ua.id, ub.id FROM ua LEFT JOIN ub USING (id) ORDER BY id
id	id	id
1	1	NULL
2	2	2
3	3	3
> SELECT * FROM ua NATURAL JOIN ub
id	x	y
2	20	200
3	30	300
> SELECT * FROM ua NATURAL LEFT JOIN uc ORDER BY id
id	x	z
1	10	NULL
2	20	NULL
3	30	3000
> SELECT * FROM ua JOIN ub USING (id) JOIN uc USING (id)
id	x	y	z
3	30	300	3000
> SELECT ua.*, uc.* FROM ua JOIN uc USING (id)
x	id	id	z
30	3	3	3000
> SELECT * FROM ua JOIN ub USING (nope)
error 1054 (42S22): Unknown column 'nope' in 'from clause'
> SELECT * FROM ua JOIN ub USING (x)
error 1054 (42S22): Unknown column 'x' in 'from clause'
# RIGHT JOIN: every row of the right side, the left padded with NULLs; `*` keeps FROM order.
> SELECT * FROM ua RIGHT JOIN ub ON ua.id = ub.id ORDER BY ub.id
x	id	id	y
20	2	2	200
30	3	3	300
NULL	NULL	4	400
> SELECT ub.id FROM ua RIGHT OUTER JOIN ub ON ua.id = ub.id WHERE ua.x IS NULL
id
4
> SELECT ub.id, uc.z FROM ua RIGHT JOIN ub ON ua.id = ub.id JOIN uc ON uc.id = ub.id ORDER BY ub.id
id	z
3	3000
4	4000
> SELECT COUNT(*) FROM ua RIGHT JOIN ub ON ua.id = ub.id RIGHT JOIN uc ON uc.id = ub.id
error 1235 (42000): This version of Strata doesn't yet support 'RIGHT JOIN after another join'
# An index join whose batch of primary-key lookups is dense reads those keys as one range and
# merges them; sparse ones are read key by key. Both give the same rows, see the transaction's
# own writes, and pad a LEFT JOIN.
> CREATE TABLE da (id INT PRIMARY KEY, v INT)
ok 0
> CREATE TABLE db (id INT PRIMARY KEY, w INT)
ok 0
> INSERT INTO da WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 300) SELECT n, n FROM s
ok 300
> INSERT INTO db WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 900) SELECT n, n * 10 FROM s WHERE n % 7 <> 0
ok 772
> EXPLAIN SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id
id	estRows	task	access object	operator info
Projection	1.00	root		count(1), sum(db.w)
└─HashAgg	1.00	root		funcs:count(1), sum(db.w)
  └─Join	10000.00	root		2 relations, in this order
    ├─TableFullScan	10000.00	cop[tikv]	table:da	
    └─Point_Get	10000.00	cop[tikv]	table:db, handle	inner index join, on:eq(db.id, da.id)
> SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id
COUNT(*)	SUM(db.w)
258	388290
> SELECT COUNT(*), COUNT(db.id), SUM(db.w) FROM da LEFT JOIN db ON db.id = da.id
COUNT(*)	COUNT(db.id)	SUM(db.w)
300	258	388290
> SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id + 1 WHERE da.id > 250
COUNT(*)	SUM(db.w)
42	116130
> SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id * 3
COUNT(*)	SUM(db.w)
258	1164870
> SELECT da.id, db.w FROM da LEFT JOIN db ON db.id = da.id WHERE da.id BETWEEN 68 AND 72
id	w
68	680
69	690
70	NULL
71	710
72	720
> BEGIN
ok 0
> DELETE FROM db WHERE id BETWEEN 10 AND 19
ok 9
> INSERT INTO db VALUES (7, 1), (14, 2)
ok 2
> UPDATE db SET w = 0 WHERE id = 100
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id
COUNT(*)	SUM(db.w)
251	385983
> ROLLBACK
ok 0
> SELECT COUNT(*), SUM(db.w) FROM da JOIN db ON db.id = da.id
COUNT(*)	SUM(db.w)
258	388290
