# Databases, tables, inserts and reads.
> CREATE DATABASE shop
ok 1
> USE shop
ok 0
> CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(10) NOT NULL, price DECIMAL(6,2) DEFAULT '0', qty INT NOT NULL DEFAULT '0', KEY by_name (name)) /*! ENGINE = innodb */
ok 0
> INSERT INTO items (name, price, qty) VALUES ('apple', 1.25, 10), ('pear', 2.5, 0), ('fig', '3.125', 7)
ok 3 last_insert_id=1
> SELECT * FROM items ORDER BY id
id	name	price	qty
1	apple	1.25	10
2	pear	2.50	0
3	fig	3.13	7
> SELECT name FROM items WHERE price > 2 ORDER BY name DESC
name
pear
fig
> SELECT COUNT(*), SUM(qty), AVG(price), MIN(name), MAX(price) FROM items
COUNT(*)	SUM(qty)	AVG(price)	MIN(name)	MAX(price)
3	17	2.293333	apple	3.13
> SELECT qty > 0 AS in_stock, COUNT(*) FROM items GROUP BY qty > 0 ORDER BY in_stock
in_stock	COUNT(*)
0	1
1	2
> SELECT DISTINCT qty > 0 FROM items
qty > 0
1
0
> SELECT id, name FROM items WHERE id IN (3, 1, 9) ORDER BY id
id	name
1	apple
3	fig
> SELECT id FROM items WHERE id BETWEEN 2 AND 3 ORDER BY id DESC LIMIT 1
id
3
> SELECT name FROM items WHERE name LIKE 'p%' OR name = 'fig' ORDER BY 1
name
fig
pear
> SELECT id FROM items ORDER BY id LIMIT 1, 1
id
2
> SELECT 7 DIV 2, 7 / 2, 7 % 3, -7 / 2, 1 / 0, COALESCE(NULL, 'x'), POWER(2, 10), CONCAT('a', 1, NULL) IS NULL
7 DIV 2	7 / 2	7 % 3	-7 / 2	1 / 0	COALESCE(NULL, 'x')	POWER(2, 10)	CONCAT('a', 1, NULL) IS NULL
3	3.5000	1	-3.5000	NULL	x	1024	1
# SLEEP waits, and returns 0; a NULL or negative duration is an error (strict mode).
> SELECT SLEEP(0.05), COUNT(SLEEP(0.01)) FROM items
SLEEP(0.05)	COUNT(SLEEP(0.01))
0	3

> SELECT SLEEP(NULL)
error 1210 (HY000): Incorrect arguments to sleep

> SELECT SLEEP(-1)
error 1210 (HY000): Incorrect arguments to sleep

> SELECT LAST_INSERT_ID(), DATABASE()
LAST_INSERT_ID()	DATABASE()
1	shop

# Updates and deletes report matched and changed rows.
> UPDATE items SET qty = qty + 1 WHERE name = 'pear'
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> UPDATE items SET qty = qty WHERE id = 1
ok 0 (Rows matched: 1  Changed: 0  Warnings: 0)
> DELETE FROM items WHERE qty > 100
ok 0
> DELETE FROM items WHERE id = 3
ok 1
> SELECT id, name, qty FROM items ORDER BY id
id	name	qty
1	apple	10
2	pear	1

# Auto-increment continues after explicit values; errors keep MySQL's codes.
> INSERT INTO items (id, name) VALUES (10, 'kiwi')
ok 1
> INSERT INTO items (name) VALUES ('lime')
ok 1 last_insert_id=11
> INSERT INTO items (id, name) VALUES (1, 'dup')
error 1062 (23000): Duplicate entry '1' for key 'items.PRIMARY'
> INSERT INTO items (name) VALUES ('far too long a name')
error 1406 (22001): Data too long for column 'name' at row 1
> INSERT INTO items (name, qty) VALUES ('x', 99999999999)
error 1264 (22003): Out of range value for column 'qty' at row 1
> INSERT INTO items (name) VALUES (NULL)
error 1048 (23000): Column 'name' cannot be null
> INSERT INTO items (nope) VALUES (1)
error 1054 (42S22): Unknown column 'nope' in 'field list'
> INSERT INTO items (name, qty) VALUES ('y', 1 / 0)
error 1365 (22012): Division by 0
> SELECT * FROM missing
error 1146 (42S02): Table 'shop.missing' doesn't exist
> SELECT nope FROM items
error 1054 (42S22): Unknown column 'nope' in 'field list'
> SELEC 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC 1' at line 1
> SELECT COUNT(*) FROM items
COUNT(*)
4

# REPLACE and INSERT … ON DUPLICATE KEY UPDATE.
> REPLACE INTO items (id, name, qty) VALUES (1, 'apple', 50)
ok 2
> INSERT INTO items (id, name, qty) VALUES (2, 'pear', 5) ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty)
ok 2
> INSERT INTO items (id, name, qty) VALUES (20, 'plum', 5) ON DUPLICATE KEY UPDATE qty = qty + VALUES(qty)
ok 1
> SELECT id, name, qty FROM items ORDER BY id
id	name	qty
1	apple	50
2	pear	6
10	kiwi	0
11	lime	0
20	plum	5

# Types: dates, datetimes, decimals, unsigned.
> CREATE TABLE events (id BIGINT UNSIGNED NOT NULL, at DATETIME, day DATE, amount DECIMAL(12,2), ratio DOUBLE, PRIMARY KEY (id))
ok 0
> INSERT INTO events VALUES (1, '2024-02-29 13:45:00', '2024-02-29', 10.005, 0.5), (18446744073709551615, NULL, NULL, -1, 1e3)
ok 2
> SELECT * FROM events ORDER BY id
id	at	day	amount	ratio
1	2024-02-29 13:45:00	2024-02-29	10.01	0.5
18446744073709551615	NULL	NULL	-1.00	1000
> SELECT SUM(amount), SUM(ratio) FROM events
SUM(amount)	SUM(ratio)
9.01	1000.5
> INSERT INTO events (id, at) VALUES (2, 'not a date')
error 1292 (22007): Incorrect datetime value: 'not a date' for column 'at' at row 1
> INSERT INTO events (id) VALUES (-1)
error 1264 (22003): Out of range value for column 'id' at row 1

# Duplicates inside one statement and on a unique index; the failed statement leaves nothing.
> CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(20), UNIQUE KEY email (email))
ok 0
> INSERT INTO u VALUES (1, 'a@x'), (2, 'b@x')
ok 2
> INSERT INTO u VALUES (3, 'c@x'), (3, 'd@x')
error 1062 (23000): Duplicate entry '3' for key 'u.PRIMARY'
> INSERT INTO u VALUES (4, 'a@x')
error 1062 (23000): Duplicate entry 'a@x' for key 'u.email'
> INSERT INTO u VALUES (5, NULL), (6, NULL)
ok 2
> UPDATE u SET email = 'b@x' WHERE id = 1
error 1062 (23000): Duplicate entry 'b@x' for key 'u.email'
> SELECT * FROM u ORDER BY id
id	email
1	a@x
2	b@x
5	NULL
6	NULL
> BEGIN
ok 0
> DELETE FROM u WHERE id = 1
ok 1
> INSERT INTO u VALUES (1, 'a2@x')
ok 1
> COMMIT
ok 0
> SELECT * FROM u WHERE id = 1
id	email
1	a2@x

# information_schema: schema and ANALYZE's sizes, read with plain SELECTs; it cannot be written.
> ANALYZE TABLE u
Table	Op	Msg_type	Msg_text
shop.u	analyze	status	OK
> SELECT TABLE_NAME, TABLE_ROWS, DATA_LENGTH > 0, INDEX_LENGTH > 0, AVG_ROW_LENGTH > 0 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'u'
TABLE_NAME	TABLE_ROWS	DATA_LENGTH > 0	INDEX_LENGTH > 0	AVG_ROW_LENGTH > 0
u	4	1	1	1
> SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'shop' AND data_length + index_length > 0
COUNT(*)
1
> SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME LIKE 'info%'
SCHEMA_NAME
information_schema
> SELECT COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE, COLUMN_TYPE, COLUMN_KEY FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'u' ORDER BY ORDINAL_POSITION
COLUMN_NAME	ORDINAL_POSITION	IS_NULLABLE	DATA_TYPE	COLUMN_TYPE	COLUMN_KEY
id	1	NO	int	int	PRI
email	2	YES	varchar	varchar(20)	UNI
> SELECT * FROM information_schema.no_such_table
error 1146 (42S02): Table 'information_schema.no_such_table' doesn't exist
> DELETE FROM information_schema.tables
error 1044 (42000): Access denied for user 'root'@'%' to database 'information_schema'
> UPDATE information_schema.tables SET table_rows = 1
error 1044 (42000): Access denied for user 'root'@'%' to database 'information_schema'
> INSERT INTO information_schema.tables (table_name) VALUES ('x')
error 1044 (42000): Access denied for user 'root'@'%' to database 'information_schema'
> EXPLAIN SELECT table_name FROM information_schema.tables
id	estRows	task	access object	operator info
Projection	3.00	root		TABLES.TABLE_NAME
└─MemTableScan	3.00	cop[tikv]	table:TABLES	
# MySQL's other spellings: INSERT … SET, LOCK IN SHARE MODE, CONVERT(… USING charset); a
# CURRENT_TIMESTAMP default keeps the column's digits of fraction (none here).
> CREATE TABLE spelled (id INT PRIMARY KEY, name VARCHAR(10), at DATETIME DEFAULT CURRENT_TIMESTAMP)
ok 0
> INSERT INTO spelled SET id = 1, name = 'one'
ok 1
> INSERT INTO spelled SET id = 2, nope = 'x'
error 1054 (42S22): Unknown column 'nope' in 'field list'
> SELECT id, name, LENGTH(at) FROM spelled WHERE id = 1 LOCK IN SHARE MODE
id	name	LENGTH(at)
1	one	19
> SELECT CONVERT('abc' USING utf8mb4), CONVERT(x'41' USING binary)
CONVERT('abc' USING utf8mb4)	CONVERT(x'41' USING binary)
abc	A
# UPDATE … ORDER BY … LIMIT changes the first rows in that order (a job queue's claim).
> CREATE TABLE jobs (id INT PRIMARY KEY, prio INT, owner VARCHAR(10))
ok 0
> INSERT INTO jobs VALUES (1, 5, NULL), (2, 9, NULL), (3, 7, NULL), (4, 9, NULL)
ok 4
> UPDATE jobs SET owner = 'w1' WHERE owner IS NULL ORDER BY prio DESC, id LIMIT 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> UPDATE jobs SET owner = 'w2' WHERE owner IS NULL ORDER BY prio DESC, id LIMIT 2
ok 2 (Rows matched: 2  Changed: 2  Warnings: 0)
> SELECT * FROM jobs ORDER BY id
id	prio	owner
1	5	NULL
2	9	w1
3	7	w2
4	9	w2
> UPDATE jobs SET prio = prio + 1 ORDER BY (SELECT 1), id DESC
ok 4 (Rows matched: 4  Changed: 4  Warnings: 0)
> SELECT id, prio FROM jobs ORDER BY id
id	prio
1	6
2	10
3	8
4	10
> UPDATE jobs SET owner = NULL WHERE id IN (SELECT id FROM (SELECT id FROM jobs ORDER BY id LIMIT 2) AS first) ORDER BY id
ok 1 (Rows matched: 2  Changed: 1  Warnings: 0)
> SELECT id, owner FROM jobs ORDER BY id
id	owner
1	NULL
2	NULL
3	w2
4	w2
> UPDATE jobs SET owner = 'x' ORDER BY nothing LIMIT 1
error 1054 (42S22): Unknown column 'nothing' in 'order clause'
> UPDATE jobs SET owner = 'x' ORDER BY LIMIT 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1
> UPDATE jobs SET owner = 'x' ORDER BY id LIMIT 1; SELECT owner FROM jobs WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
owner
x
# Subqueries in an UPDATE's or DELETE's WHERE, ORDER BY and SET, correlated or not.
> CREATE TABLE totals (id INT PRIMARY KEY, owner VARCHAR(10), n INT)
ok 0
> INSERT INTO totals VALUES (1, 'w1', 0), (2, 'w2', 0), (3, 'w9', 0)
ok 3
> UPDATE totals SET n = (SELECT COUNT(*) FROM jobs WHERE jobs.owner = totals.owner)
ok 1 (Rows matched: 3  Changed: 1  Warnings: 0)
> SELECT * FROM totals ORDER BY id
id	owner	n
1	w1	0
2	w2	2
3	w9	0
> UPDATE totals SET n = n + 100 WHERE owner IN (SELECT owner FROM jobs WHERE prio >= 7)
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT * FROM totals ORDER BY id
id	owner	n
1	w1	0
2	w2	102
3	w9	0
> DELETE FROM totals WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.owner = totals.owner)
ok 2
> SELECT * FROM totals ORDER BY id
id	owner	n
2	w2	102
> UPDATE totals SET n = (SELECT id FROM jobs)
error 1242 (21000): Subquery returns more than 1 row
> DELETE FROM totals WHERE id = (SELECT MAX(id) FROM jobs) - 2 ORDER BY id LIMIT 1
ok 1
> SELECT * FROM totals ORDER BY id
id	owner	n
# FROM DUAL names no table; information_schema lists keys as ORMs read them.
> SELECT 1 + 1 FROM DUAL
1 + 1
2
> SELECT 1 FROM dual WHERE 1 = 1
1
1
> CREATE TABLE keyed2 (id INT PRIMARY KEY, code VARCHAR(5) NOT NULL, a INT, b INT, UNIQUE KEY uc (code), KEY ab (a, b))
ok 0
> SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, NULLABLE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'keyed2' ORDER BY INDEX_NAME, SEQ_IN_INDEX
INDEX_NAME	NON_UNIQUE	SEQ_IN_INDEX	COLUMN_NAME	NULLABLE
PRIMARY	0	1	id	
ab	1	1	a	YES
ab	1	2	b	YES
uc	0	1	code	
> SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_NAME = 'keyed2' ORDER BY CONSTRAINT_NAME
CONSTRAINT_NAME	COLUMN_NAME	ORDINAL_POSITION	REFERENCED_TABLE_NAME
PRIMARY	id	1	NULL
uc	code	1	NULL
> SELECT CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_NAME = 'keyed2' ORDER BY CONSTRAINT_NAME
CONSTRAINT_NAME	CONSTRAINT_TYPE
PRIMARY	PRIMARY KEY
uc	UNIQUE
> SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS
COUNT(*)
0
# SET with a subquery runs it.
> SET @keys = (SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_NAME = 'keyed2'), @any = EXISTS (SELECT 1 FROM keyed2)
ok 0
> SELECT @keys, @any
@keys	@any
4	0
> SET @two = (SELECT id FROM jobs)
error 1242 (21000): Subquery returns more than 1 row
