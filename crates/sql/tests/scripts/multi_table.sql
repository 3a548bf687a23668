# UPDATE and DELETE over several tables (MySQL's multiple-table forms): each target row is
# written once, from the first joined row it appears in; outer joins leave padded sides
# alone; a table without a primary key is written by its hidden row id.
> CREATE DATABASE mt
ok 1
> USE mt
ok 0
> CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10), price DECIMAL(6,2), qty INT, KEY name (name))
ok 0
> CREATE TABLE prices (item INT, price DECIMAL(6,2), since INT)
ok 0
> INSERT INTO items VALUES (1, 'apple', 1.00, 10), (2, 'pear', 2.00, 20), (3, 'plum', 3.00, 30), (4, 'fig', 4.00, 40)
ok 4
> INSERT INTO prices VALUES (1, 1.50, 2020), (2, 2.50, 2020), (2, 2.75, 2021), (5, 9.99, 2020)
ok 4
> UPDATE items JOIN prices ON prices.item = items.id SET items.price = prices.price
ok 2 (Rows matched: 2  Changed: 2  Warnings: 0)
> SELECT id, price FROM items ORDER BY id
id	price
1	1.50
2	2.50
3	3.00
4	4.00
> UPDATE items, prices SET items.qty = items.qty + 1, prices.since = prices.since + 100 WHERE items.id = prices.item AND items.id = 2
ok 3 (Rows matched: 3  Changed: 3  Warnings: 0)
> SELECT id, qty FROM items ORDER BY id
id	qty
1	10
2	21
3	30
4	40
> SELECT item, price, since FROM prices ORDER BY item, price
item	price	since
1	1.50	2020
2	2.50	2120
2	2.75	2121
5	9.99	2020
> UPDATE items i LEFT JOIN prices p ON p.item = i.id SET i.qty = COALESCE(p.since, 0) WHERE i.id IN (3, 4)
ok 2 (Rows matched: 2  Changed: 2  Warnings: 0)
> SELECT id, qty FROM items ORDER BY id
id	qty
1	10
2	21
3	0
4	0
# Assignments read values assigned before them; the index follows the changed name.
> UPDATE items AS a JOIN items AS b ON b.id = a.id + 1 SET a.name = CONCAT(a.name, '+'), a.qty = a.qty * 2 WHERE b.name = 'plum'
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT id, name, qty FROM items WHERE name = 'pear+'
id	name	qty
2	pear+	42
> UPDATE items i JOIN (SELECT item, MAX(price) AS top FROM prices GROUP BY item) m ON m.item = i.id SET i.price = m.top
ok 1 (Rows matched: 2  Changed: 1  Warnings: 0)
> SELECT id, price FROM items ORDER BY id
id	price
1	1.50
2	2.75
3	3.00
4	4.00
> UPDATE items i SET i.qty = 0 WHERE i.id = (SELECT MIN(item) FROM prices)
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> UPDATE items i JOIN prices p ON p.item = i.id SET i.qty = (SELECT COUNT(*) FROM prices q WHERE q.item = i.id) WHERE p.since > (SELECT MIN(since) FROM prices)
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT id, qty FROM items ORDER BY id
id	qty
1	0
2	2
3	0
4	0
# Errors, as MySQL gives them.
> UPDATE items i JOIN prices p ON p.item = i.id SET nope = 1
error 1054 (42S22): Unknown column 'nope' in 'field list'
> UPDATE items i JOIN prices p ON p.item = i.id SET price = 1
error 1052 (23000): Column 'price' in field list is ambiguous
> UPDATE items i JOIN (SELECT 1 AS x) d SET d.x = 2
error 1288 (HY000): The target table d of the UPDATE is not updatable
> UPDATE items i JOIN prices p ON p.item = i.id SET i.qty = 1 ORDER BY i.id
error 1221 (HY000): Incorrect usage of UPDATE and ORDER BY
> UPDATE items i JOIN prices p ON p.item = i.id SET i.qty = 1 LIMIT 1
error 1221 (HY000): Incorrect usage of UPDATE and LIMIT
> UPDATE items a JOIN items b ON a.id = b.id SET a.id = a.id + 10, b.qty = 1
error 1706 (HY000): Primary key/partition key update is not allowed since the table is updated both as 'a' and 'b'.
> UPDATE items a JOIN prices p ON p.item = a.id SET a.id = 2 WHERE a.id = 1
error 1062 (23000): Duplicate entry '2' for key 'items.PRIMARY'
> UPDATE items a JOIN prices p ON p.item = a.id SET a.id = a.id + 10 WHERE a.id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT id FROM items ORDER BY id
id
2
3
4
11
> UPDATE items, prices SET items.qty = 1 WHERE items.id = prices.nope
error 1054 (42S22): Unknown column 'prices.nope' in 'where clause'
> UPDATE items FROM prices SET qty = 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FROM prices SET qty = 1' at line 1
# DELETE: both forms, several targets, and a target under an alias.
> CREATE TABLE orders (id INT PRIMARY KEY AUTO_INCREMENT, item INT, n INT)
ok 0
> CREATE TABLE notes (item INT, body VARCHAR(10))
ok 0
> INSERT INTO orders (item, n) VALUES (1, 1), (1, 2), (2, 3), (3, 4), (9, 5)
ok 5 last_insert_id=1
> INSERT INTO notes VALUES (1, 'a'), (2, 'b'), (2, 'c'), (7, 'd')
ok 4
> DELETE orders FROM orders LEFT JOIN items ON items.id = orders.item WHERE items.id IS NULL
ok 3
> SELECT id, item FROM orders ORDER BY id
id	item
3	2
4	3
> DELETE o, n FROM orders AS o JOIN notes AS n ON n.item = o.item WHERE o.item = 2
ok 3
> SELECT id, item FROM orders ORDER BY id
id	item
4	3
> SELECT item, body FROM notes ORDER BY item, body
item	body
1	a
7	d
> DELETE FROM n USING notes AS n LEFT JOIN orders ON orders.item = n.item WHERE orders.id IS NULL
ok 2
> SELECT item, body FROM notes ORDER BY item, body
item	body
> INSERT INTO orders (item, n) VALUES (2, 6), (2, 7), (4, 8)
ok 3 last_insert_id=6
> DELETE mt.orders FROM mt.orders JOIN items ON items.id = orders.item WHERE items.name = 'pear+' AND orders.n = 6
ok 1
> SELECT id, item, n FROM orders ORDER BY id
id	item	n
4	3	4
7	2	7
8	4	8
> DELETE o.* FROM orders o JOIN items i ON i.id = o.item WHERE i.id = 4
ok 1
> DELETE FROM o.* USING orders o WHERE o.n = 7
ok 1
> SELECT id, item, n FROM orders ORDER BY id
id	item	n
4	3	4
> DELETE orders FROM orders o JOIN items ON items.id = o.item
error 1109 (42S02): Unknown table 'orders' in MULTI DELETE
> DELETE x FROM orders JOIN items ON items.id = orders.item
error 1109 (42S02): Unknown table 'x' in MULTI DELETE
> DELETE orders, orders FROM orders JOIN items ON items.id = orders.item
error 1066 (42000): Not unique table/alias: 'orders'
> DELETE d FROM orders JOIN (SELECT 1 AS item) d ON d.item = orders.item
error 1288 (HY000): The target table d of the DELETE is not updatable
> DELETE orders FROM orders JOIN items ON items.id = orders.item LIMIT 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'LIMIT 1' at line 1
> DELETE FROM orders, items USING orders JOIN items ON items.id = orders.item WHERE orders.n = 4
ok 2
> SELECT COUNT(*) FROM orders
COUNT(*)
0
> SELECT id FROM items ORDER BY id
id
2
4
11
# Inside a transaction, in both modes: the writes roll back with it.
> SET tidb_txn_mode = 'pessimistic'
ok 0
> BEGIN
ok 0
> UPDATE items a JOIN items b ON b.id = a.id SET a.qty = b.qty + 100
ok 3 (Rows matched: 3  Changed: 3  Warnings: 0)
> SELECT id, qty FROM items ORDER BY id
id	qty
2	102
4	100
11	100
> ROLLBACK
ok 0
> SET tidb_txn_mode = 'optimistic'
ok 0
> BEGIN
ok 0
> DELETE a FROM items a, items b WHERE a.id = b.id + 2
ok 1
> SELECT id FROM items ORDER BY id
id
2
11
> ROLLBACK
ok 0
> SELECT id, qty FROM items ORDER BY id
id	qty
2	2
4	0
11	0
> DROP DATABASE mt
ok 0
