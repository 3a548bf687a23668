# EXPLAIN of every statement sysbench's OLTP scripts and the five TPC-C transactions send
# (literals where they bind parameters), on small analyzed tables: the plans they run with.
> CREATE DATABASE ex
ok 1
> USE ex
ok 0
> CREATE TABLE sbtest1 (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))
ok 0
> INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'c1', 'p1'), (2, 'c2', 'p2'), (3, 'c3', 'p3'), (4, 'c4', 'p4'), (5, 'c5', 'p5'), (6, 'c6', 'p6'), (0, 'c7', 'p7'), (1, 'c8', 'p8'), (2, 'c9', 'p9'), (3, 'c10', 'p10'), (4, 'c11', 'p11'), (5, 'c12', 'p12'), (6, 'c13', 'p13'), (0, 'c14', 'p14'), (1, 'c15', 'p15'), (2, 'c16', 'p16'), (3, 'c17', 'p17'), (4, 'c18', 'p18'), (5, 'c19', 'p19'), (6, 'c20', 'p20'), (0, 'c21', 'p21'), (1, 'c22', 'p22'), (2, 'c23', 'p23'), (3, 'c24', 'p24'), (4, 'c25', 'p25'), (5, 'c26', 'p26'), (6, 'c27', 'p27'), (0, 'c28', 'p28'), (1, 'c29', 'p29'), (2, 'c30', 'p30'), (3, 'c31', 'p31'), (4, 'c32', 'p32'), (5, 'c33', 'p33'), (6, 'c34', 'p34'), (0, 'c35', 'p35'), (1, 'c36', 'p36'), (2, 'c37', 'p37'), (3, 'c38', 'p38'), (4, 'c39', 'p39'), (5, 'c40', 'p40')
ok 40 last_insert_id=1
> CREATE INDEX k_1 ON sbtest1 (k)
ok 0
> ANALYZE TABLE sbtest1
Table	Op	Msg_type	Msg_text
ex.sbtest1	analyze	status	OK

# sysbench point_selects
> EXPLAIN SELECT c FROM sbtest1 WHERE id=5
id	estRows	task	access object	operator info
Projection	1.00	root		sbtest1.c
└─Point_Get	1.00	cop[tikv]	table:sbtest1, handle	eq(sbtest1.id, 5)

# sysbench simple_ranges
> EXPLAIN SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 14
id	estRows	task	access object	operator info
Projection	2.00	root		sbtest1.c
└─TableRangeScan	2.00	cop[tikv]	table:sbtest1, range on primary key	between(sbtest1.id, 5, 14)

# sysbench sum_ranges
> EXPLAIN SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 5 AND 14
id	estRows	task	access object	operator info
Projection	1.00	root		sum(sbtest1.k)
└─HashAgg	1.00	root		funcs:sum(sbtest1.k)
  └─TableRangeScan	2.00	cop[tikv]	table:sbtest1, range on primary key	between(sbtest1.id, 5, 14)

# sysbench order_ranges
> EXPLAIN SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 14 ORDER BY c
id	estRows	task	access object	operator info
Sort	2.00	root		sbtest1.c
└─Projection	2.00	root		sbtest1.c
  └─TableRangeScan	2.00	cop[tikv]	table:sbtest1, range on primary key	between(sbtest1.id, 5, 14)

# sysbench distinct_ranges
> EXPLAIN SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5 AND 14 ORDER BY c
id	estRows	task	access object	operator info
Sort	2.00	root		sbtest1.c
└─HashAgg	2.00	root		distinct
  └─Projection	2.00	root		sbtest1.c
    └─TableRangeScan	2.00	cop[tikv]	table:sbtest1, range on primary key	between(sbtest1.id, 5, 14)

# sysbench index_updates
> EXPLAIN UPDATE sbtest1 SET k=k+1 WHERE id=5
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:sbtest1, handle	eq(sbtest1.id, 5)

# sysbench non_index_updates
> EXPLAIN UPDATE sbtest1 SET c='x' WHERE id=5
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:sbtest1, handle	eq(sbtest1.id, 5)

# sysbench deletes
> EXPLAIN DELETE FROM sbtest1 WHERE id=5
id	estRows	task	access object	operator info
Delete	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:sbtest1, handle	eq(sbtest1.id, 5)

# sysbench inserts
> EXPLAIN INSERT INTO sbtest1 (id, k, c, pad) VALUES (5, 1, 'c', 'p')
id	estRows	task	access object	operator info
Insert	N/A	root		
# INSERT … SELECT and REPLACE … SELECT: the query's operator tree under the insert.
> EXPLAIN INSERT INTO sbtest1 (id, k, c, pad) SELECT id + 100, k, c, pad FROM sbtest1 WHERE id BETWEEN 1 AND 3 ORDER BY id LIMIT 2
id	estRows	task	access object	operator info
Insert	N/A	root		
└─Limit	2.00	root		count:2
  └─Projection	2.00	root		plus(sbtest1.id, 100), sbtest1.k, sbtest1.c, sbtest1.pad
    └─TableRangeScan	2.00	cop[tikv]	table:sbtest1, range on primary key, keep order	between(sbtest1.id, 1, 3)
> EXPLAIN REPLACE INTO sbtest1 SELECT * FROM sbtest1 WHERE k = 1
id	estRows	task	access object	operator info
Insert	N/A	root		
└─Projection	5.71	root		sbtest1.id, sbtest1.k, sbtest1.c, sbtest1.pad
  └─IndexLookUp	5.71	cop[tikv]	table:sbtest1, index:k_1	eq(sbtest1.k, 1)
> CREATE TABLE warehouse (w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4, 4), w_ytd DECIMAL(12, 2), PRIMARY KEY (w_id) /*T![clustered_index] CLUSTERED */)
ok 0
> CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4, 4), d_ytd DECIMAL(12, 2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id) /*T![clustered_index] CLUSTERED */)
ok 0
> CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), c_credit_lim DECIMAL(12, 2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY(c_w_id, c_d_id, c_id) /*T![clustered_index] CLUSTERED */, INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))
ok 0
> CREATE TABLE history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL, h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME, h_amount DECIMAL(6, 2), h_data VARCHAR(24), INDEX idx_h_w_id (h_w_id), INDEX idx_h_c_w_id (h_c_w_id))
ok 0
> CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, PRIMARY KEY(no_w_id, no_d_id, no_o_id) /*T![clustered_index] CLUSTERED */)
ok 0
> CREATE TABLE orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME, o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY(o_w_id, o_d_id, o_id) /*T![clustered_index] CLUSTERED */, INDEX idx_order (o_w_id, o_d_id, o_c_id, o_id))
ok 0
> CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, ol_supply_w_id INT, ol_delivery_d DATETIME, ol_quantity INT, ol_amount DECIMAL(6, 2), ol_dist_info CHAR(24), PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number) /*T![clustered_index] CLUSTERED */)
ok 0
> CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY(s_w_id, s_i_id) /*T![clustered_index] CLUSTERED */)
ok 0
> CREATE TABLE item (i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5, 2), i_data VARCHAR(50), PRIMARY KEY(i_id) /*T![clustered_index] CLUSTERED */)
ok 0
> INSERT INTO warehouse (w_id, w_name, w_tax, w_ytd) VALUES (1, 'w1', 0.1000, 300.00), (2, 'w2', 0.2000, 100.00)
ok 2
> INSERT INTO district (d_id, d_w_id, d_tax, d_ytd, d_next_o_id) VALUES (1, 1, 0.1000, 100.00, 4), (2, 1, 0.1000, 200.00, 3), (1, 2, 0.1000, 100.00, 1)
ok 3
> INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_last, c_balance, c_discount, c_ytd_payment, c_payment_cnt, c_delivery_cnt) VALUES (1, 1, 1, 'ann', 'BAR', -10.00, 0.0500, 0, 0, 0), (2, 1, 1, 'bob', 'BAR', 5.00, 0.1000, 0, 0, 0), (3, 2, 1, 'cy', 'OUGHT', 0.00, 0.2000, 0, 0, 0)
ok 3
> INSERT INTO new_order VALUES (2, 1, 1), (3, 1, 1), (2, 2, 1)
ok 3
> INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_ol_cnt) VALUES (1, 1, 1, 1, 2), (2, 1, 1, 2, 1), (3, 1, 1, 1, 3), (1, 2, 1, 3, 1), (2, 2, 1, 3, 2)
ok 5
> INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_amount) VALUES (1, 1, 1, 1, 10, 1.50), (1, 1, 1, 2, 11, 2.25), (2, 1, 1, 1, 10, 3.00), (3, 1, 1, 1, 12, 4.00), (2, 2, 1, 1, 10, 0.01)
ok 5
> INSERT INTO stock (s_i_id, s_w_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt) VALUES (10, 1, 5, 0, 0, 0), (11, 1, 50, 0, 0, 0), (12, 1, 15, 0, 0, 0), (10, 2, 1, 0, 0, 0)
ok 4
> INSERT INTO item (i_id, i_name, i_price) VALUES (10, 'i10', 1.00), (11, 'i11', 2.00), (12, 'i12', 3.00)
ok 3
> ANALYZE TABLE warehouse, district, customer, history, new_order, orders, order_line, stock, item
Table	Op	Msg_type	Msg_text
ex.warehouse	analyze	status	OK
ex.district	analyze	status	OK
ex.customer	analyze	status	OK
ex.history	analyze	status	OK
ex.new_order	analyze	status	OK
ex.orders	analyze	status	OK
ex.order_line	analyze	status	OK
ex.stock	analyze	status	OK
ex.item	analyze	status	OK

# TPC-C New-Order
> EXPLAIN SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = 1 AND c_w_id = w_id AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Projection	1.00	root		customer.c_discount, customer.c_last, customer.c_credit, warehouse.w_tax
└─Join	1.00	root		2 relations, in this order
  ├─Point_Get	1.00	cop[tikv]	table:warehouse, handle	on:eq(warehouse.w_id, 1)
  └─Point_Get	1.00	cop[tikv]	table:customer, handle	inner index join, on:and(eq(customer.c_w_id, warehouse.w_id), and(eq(customer.c_d_id, 1), eq(customer.c_id, 2)))
> EXPLAIN SELECT d_next_o_id, d_tax FROM district WHERE d_id = 1 AND d_w_id = 1 FOR UPDATE
id	estRows	task	access object	operator info
Projection	1.00	root		district.d_next_o_id, district.d_tax
└─Point_Get	1.00	cop[tikv]	table:district, handle	and(eq(district.d_id, 1), eq(district.d_w_id, 1)), for update
> EXPLAIN UPDATE district SET d_next_o_id = 4 + 1 WHERE d_id = 1 AND d_w_id = 1
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:district, handle	and(eq(district.d_id, 1), eq(district.d_w_id, 1))
> EXPLAIN INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (4, 1, 1, 2, '2024-01-01 00:00:00', 2, 1)
id	estRows	task	access object	operator info
Insert	N/A	root		
> EXPLAIN INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (4, 1, 1)
id	estRows	task	access object	operator info
Insert	N/A	root		
> EXPLAIN SELECT i_price, i_name, i_data, i_id FROM item WHERE i_id IN (10, 11, 12)
id	estRows	task	access object	operator info
Projection	3.00	root		item.i_price, item.i_name, item.i_data, item.i_id
└─Batch_Point_Get	3.00	cop[tikv]	table:item, 3 keys	in(item.i_id, 10, 11, 12)
> EXPLAIN SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02 FROM stock WHERE (s_w_id, s_i_id) IN ((1, 10), (1, 11)) FOR UPDATE
id	estRows	task	access object	operator info
Projection	2.00	root		stock.s_i_id, stock.s_quantity, stock.s_data, stock.s_dist_01, stock.s_dist_02
└─Batch_Point_Get	2.00	cop[tikv]	table:stock, 2 keys	in((stock.s_w_id, stock.s_i_id), 2 tuples), for update
> EXPLAIN UPDATE stock SET s_quantity = 5, s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + 0 WHERE s_i_id = 10 AND s_w_id = 1
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:stock, handle	and(eq(stock.s_i_id, 10), eq(stock.s_w_id, 1))
> EXPLAIN INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (4, 1, 1, 1, 10, 1, 1, 1.50, 'x'), (4, 1, 1, 2, 11, 1, 1, 2.50, 'y')
id	estRows	task	access object	operator info
Insert	N/A	root		

# TPC-C Payment
> EXPLAIN UPDATE district SET d_ytd = d_ytd + 10.00 WHERE d_w_id = 1 AND d_id = 1
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:district, handle	and(eq(district.d_w_id, 1), eq(district.d_id, 1))
> EXPLAIN SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = 1 AND d_id = 1
id	estRows	task	access object	operator info
Projection	1.00	root		district.d_street_1, district.d_street_2, district.d_city, district.d_state, district.d_zip, district.d_name
└─Point_Get	1.00	cop[tikv]	table:district, handle	and(eq(district.d_w_id, 1), eq(district.d_id, 1))
> EXPLAIN UPDATE warehouse SET w_ytd = w_ytd + 10.00 WHERE w_id = 1
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:warehouse, handle	eq(warehouse.w_id, 1)
> EXPLAIN SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = 1
id	estRows	task	access object	operator info
Projection	1.00	root		warehouse.w_street_1, warehouse.w_street_2, warehouse.w_city, warehouse.w_state, warehouse.w_zip, warehouse.w_name
└─Point_Get	1.00	cop[tikv]	table:warehouse, handle	eq(warehouse.w_id, 1)
> EXPLAIN SELECT c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BAR' ORDER BY c_first
id	estRows	task	access object	operator info
Sort	0.00	root		customer.c_first
└─Projection	0.00	root		customer.c_id
  └─IndexLookUp	0.00	cop[tikv]	table:customer, index:idx_customer	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_last, "BAR")))
> EXPLAIN SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2 FOR UPDATE
id	estRows	task	access object	operator info
Projection	1.00	root		customer.c_first, customer.c_middle, customer.c_last, customer.c_street_1, customer.c_street_2, customer.c_city, customer.c_state, customer.c_zip, customer.c_phone, customer.c_credit, customer.c_credit_lim, customer.c_discount, customer.c_balance, customer.c_since
└─Point_Get	1.00	cop[tikv]	table:customer, handle	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_id, 2))), for update
> EXPLAIN SELECT c_data FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Projection	1.00	root		customer.c_data
└─Point_Get	1.00	cop[tikv]	table:customer, handle	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_id, 2)))
> EXPLAIN UPDATE customer SET c_balance = c_balance - 10.00, c_ytd_payment = c_ytd_payment + 10.00, c_payment_cnt = c_payment_cnt + 1, c_data = 'd' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:customer, handle	and(and(eq(customer.c_w_id, 1), eq(customer.c_d_id, 1)), eq(customer.c_id, 2))
> EXPLAIN INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (1, 1, 2, 1, 1, '2024-01-01 00:00:00', 10.00, 'h')
id	estRows	task	access object	operator info
Insert	N/A	root		

# TPC-C Order-Status
> EXPLAIN SELECT count(c_id) namecnt FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BAR'
id	estRows	task	access object	operator info
Projection	1.00	root		count(customer.c_id)
└─HashAgg	1.00	root		funcs:count(customer.c_id)
  └─IndexLookUp	0.00	cop[tikv]	table:customer, index:idx_customer	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_last, "BAR")))
> EXPLAIN SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_last = 'BAR' ORDER BY c_first
id	estRows	task	access object	operator info
Sort	0.00	root		customer.c_first
└─Projection	0.00	root		customer.c_balance, customer.c_first, customer.c_middle, customer.c_id
  └─IndexLookUp	0.00	cop[tikv]	table:customer, index:idx_customer	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_last, "BAR")))
> EXPLAIN SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Projection	1.00	root		customer.c_balance, customer.c_first, customer.c_middle, customer.c_last
└─Point_Get	1.00	cop[tikv]	table:customer, handle	and(eq(customer.c_w_id, 1), and(eq(customer.c_d_id, 1), eq(customer.c_id, 2)))
> EXPLAIN SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = 2 ORDER BY o_id DESC LIMIT 1
id	estRows	task	access object	operator info
Limit	0.01	root		count:1
└─TopN	0.01	root		orders.o_id:desc, count:1
  └─Projection	0.01	root		orders.o_id, orders.o_carrier_id, orders.o_entry_d
    └─IndexLookUp	0.01	cop[tikv]	table:orders, index:idx_order	and(eq(orders.o_w_id, 1), and(eq(orders.o_d_id, 1), eq(orders.o_c_id, 2)))
> EXPLAIN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 1
id	estRows	task	access object	operator info
Projection	0.01	root		order_line.ol_i_id, order_line.ol_supply_w_id, order_line.ol_quantity, order_line.ol_amount, order_line.ol_delivery_d
└─TableRangeScan	0.01	cop[tikv]	table:order_line, range on primary key	and(eq(order_line.ol_w_id, 1), and(eq(order_line.ol_d_id, 1), eq(order_line.ol_o_id, 1)))

# TPC-C Delivery
> EXPLAIN SELECT no_o_id FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE
id	estRows	task	access object	operator info
Limit	0.03	root		count:1
└─Projection	0.03	root		new_order.no_o_id
  └─TableRangeScan	0.03	cop[tikv]	table:new_order, range on primary key, keep order	and(eq(new_order.no_w_id, 1), eq(new_order.no_d_id, 1)), for update
> EXPLAIN DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ((1, 1, 2), (1, 2, 2))
id	estRows	task	access object	operator info
Delete	N/A	root		
└─Batch_Point_Get	2.00	cop[tikv]	table:new_order, 2 keys	in((new_order.no_w_id, new_order.no_d_id, new_order.no_o_id), 2 tuples)
> EXPLAIN UPDATE orders SET o_carrier_id = 3 WHERE (o_w_id, o_d_id, o_id) IN ((1, 1, 2), (1, 2, 2))
id	estRows	task	access object	operator info
Update	N/A	root		
└─Batch_Point_Get	2.00	cop[tikv]	table:orders, 2 keys	in((orders.o_w_id, orders.o_d_id, orders.o_id), 2 tuples)
> EXPLAIN SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ((1, 1, 2), (1, 2, 2))
id	estRows	task	access object	operator info
Projection	2.00	root		orders.o_d_id, orders.o_c_id
└─Batch_Point_Get	2.00	cop[tikv]	table:orders, 2 keys	in((orders.o_w_id, orders.o_d_id, orders.o_id), 2 tuples)
> EXPLAIN UPDATE order_line SET ol_delivery_d = '2024-01-02 00:00:00' WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 2), (1, 2, 2))
id	estRows	task	access object	operator info
Update	N/A	root		
└─TableRangeScan	0.01	cop[tikv]	table:order_line, 2 primary-key prefixes	in((order_line.ol_w_id, order_line.ol_d_id, order_line.ol_o_id), 2 tuples)
> EXPLAIN SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ((1, 1, 2), (1, 2, 2)) GROUP BY ol_d_id
id	estRows	task	access object	operator info
Projection	0.01	root		order_line.ol_d_id, sum(order_line.ol_amount)
└─HashAgg	0.01	root		group by:order_line.ol_d_id, funcs:sum(order_line.ol_amount)
  └─TableRangeScan	0.01	cop[tikv]	table:order_line, 2 primary-key prefixes	in((order_line.ol_w_id, order_line.ol_d_id, order_line.ol_o_id), 2 tuples)
> EXPLAIN UPDATE customer SET c_balance = c_balance + 3.00, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2
id	estRows	task	access object	operator info
Update	N/A	root		
└─Point_Get	1.00	cop[tikv]	table:customer, handle	and(and(eq(customer.c_w_id, 1), eq(customer.c_d_id, 1)), eq(customer.c_id, 2))

# TPC-C Stock-Level
> EXPLAIN SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1
id	estRows	task	access object	operator info
Projection	1.00	root		district.d_next_o_id
└─Point_Get	1.00	cop[tikv]	table:district, handle	and(eq(district.d_w_id, 1), eq(district.d_id, 1))
> EXPLAIN SELECT /*+ TIDB_INLJ(order_line,stock) */ COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND ol_o_id >= 4 - 20 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 15
id	estRows	task	access object	operator info
Projection	1.00	root		count(distinct stock.s_i_id)
└─HashAgg	1.00	root		funcs:count(distinct stock.s_i_id)
  └─Join	1.00	root		2 relations, in this order
    ├─TableRangeScan	1.00	cop[tikv]	table:stock, range on primary key	on:and(eq(stock.s_w_id, 1), lt(stock.s_quantity, 15))
    └─TableRangeScan	1.00	cop[tikv]	table:order_line, range on primary key	inner index join, on:and(and(eq(order_line.ol_w_id, 1), eq(order_line.ol_d_id, 1)), and(lt(order_line.ol_o_id, 4), and(ge(order_line.ol_o_id, minus(4, 20)), eq(stock.s_i_id, order_line.ol_i_id))))

# EXPLAIN ANALYZE runs the statement: each operator of the block shows the rows it handed up
# (the root's are the statement's), how often it was pulled and its time.
> SELECT ol_o_id, ol_number, s_quantity FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND s_w_id = 1 AND s_i_id = ol_i_id ORDER BY ol_o_id, ol_number
ol_o_id	ol_number	s_quantity
1	1	5
1	2	50
2	1	5
3	1	15
> EXPLAIN ANALYZE SELECT ol_o_id, ol_number, s_quantity FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND s_w_id = 1 AND s_i_id = ol_i_id ORDER BY ol_o_id, ol_number
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Sort	1.00	4	root		time:<t>, loops:2, kv_reads:2, process_keys:15, total_keys:15	order_line.ol_o_id, order_line.ol_number	576 Bytes	0 Bytes
└─Projection	1.00	4	root		time:<t>, loops:2, kv_reads:2, process_keys:15, total_keys:15	order_line.ol_o_id, order_line.ol_number, stock.s_quantity	N/A	N/A
  └─Join	1.00	4	root		time:<t>, loops:2, kv_reads:2, process_keys:15, total_keys:15	2 relations, in this order	N/A	N/A
    ├─TableRangeScan	1.00	3	cop[tikv]	table:stock, range on primary key	loops:1, kv_reads:1, process_keys:3, total_keys:3	on:eq(stock.s_w_id, 1)	N/A	N/A
    └─TableRangeScan	1.00	4	cop[tikv]	table:order_line, range on primary key	loops:1, kv_reads:1, process_keys:12, total_keys:12	inner index join, on:and(and(eq(order_line.ol_w_id, 1), eq(order_line.ol_d_id, 1)), and(lt(order_line.ol_o_id, 4), eq(stock.s_i_id, order_line.ol_i_id)))	N/A	N/A
> EXPLAIN ANALYZE SELECT COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 4 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 15
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Projection	1.00	1	root		time:<t>, loops:2, kv_reads:2, process_keys:7, total_keys:7	count(distinct stock.s_i_id)	N/A	N/A
└─HashAgg	1.00	1	root		time:<t>, loops:2, kv_reads:2, process_keys:7, total_keys:7	funcs:count(distinct stock.s_i_id)	480 Bytes	0 Bytes
  └─Join	1.00	2	root		time:<t>, loops:2, kv_reads:2, process_keys:7, total_keys:7	2 relations, in this order	N/A	N/A
    ├─TableRangeScan	1.00	1	cop[tikv]	table:stock, range on primary key	loops:1, kv_reads:1, process_keys:3, total_keys:3	on:and(eq(stock.s_w_id, 1), lt(stock.s_quantity, 15))	N/A	N/A
    └─TableRangeScan	1.00	2	cop[tikv]	table:order_line, range on primary key	loops:1, kv_reads:1, process_keys:4, total_keys:4	inner index join, on:and(and(eq(order_line.ol_w_id, 1), eq(order_line.ol_d_id, 1)), and(lt(order_line.ol_o_id, 4), eq(stock.s_i_id, order_line.ol_i_id)))	N/A	N/A
> EXPLAIN ANALYZE SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 14 LIMIT 3
id	estRows	actRows	task	access object	execution info	operator info	memory	disk
Limit	2.00	3	root		time:<t>, loops:2, kv_reads:1, process_keys:3, total_keys:6	count:3	N/A	N/A
└─Projection	2.00	3	root		time:<t>, loops:1, kv_reads:1, process_keys:3, total_keys:6	sbtest1.c	N/A	N/A
  └─TableRangeScan	2.00	3	cop[tikv]	table:sbtest1, range on primary key	time:<t>, loops:1, kv_reads:1, process_keys:3, total_keys:6	between(sbtest1.id, 5, 14)	N/A	N/A
> EXPLAIN ANALYZE UPDATE stock SET s_quantity = 1 WHERE s_w_id = 1
error 1235 (42000): This version of Strata doesn't yet support 'EXPLAIN ANALYZE of a statement other than SELECT'
