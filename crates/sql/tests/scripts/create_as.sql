# CREATE TABLE … LIKE copies the definition (columns, keys, comment), not the rows.
# CREATE TABLE … SELECT makes a column per query column, after those it declares, and fills it.
> CREATE DATABASE ctas
ok 1
> USE ctas
ok 0
> CREATE TABLE src (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL DEFAULT 'x', kind ENUM('a', 'b'), price DECIMAL(8, 2), at DATETIME(3), UNIQUE KEY un (name), KEY kk (kind, price)) COMMENT 'source'
ok 0
> INSERT INTO src (name, kind, price, at) VALUES ('n1', 'a', 1.50, '2026-01-02 03:04:05.678'), ('n2', 'b', 20.25, NULL), ('n3', NULL, NULL, '2026-06-01 00:00:00')
ok 3 last_insert_id=1
> CREATE TABLE copy LIKE src
ok 0
> SHOW CREATE TABLE copy
Table	Create Table
copy	CREATE TABLE `copy` (
  `id` int NOT NULL AUTO_INCREMENT,
  `name` varchar(20) NOT NULL DEFAULT 'x',
  `kind` enum('a','b') DEFAULT NULL,
  `price` decimal(8,2) DEFAULT NULL,
  `at` datetime(3) DEFAULT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,
  UNIQUE KEY `un` (`name`),
  KEY `kk` (`kind`,`price`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='source'
> SELECT COUNT(*) FROM copy
COUNT(*)
0
> INSERT INTO copy (name) VALUES ('only')
ok 1 last_insert_id=1
> SELECT id, name, kind FROM copy
id	name	kind
1	only	NULL
> CREATE TABLE copy LIKE src
error 1050 (42S01): Table 'copy' already exists
> CREATE TABLE IF NOT EXISTS copy LIKE src
ok 0
> CREATE TABLE other LIKE nothing
error 1146 (42S02): Table 'ctas.nothing' doesn't exist
> CREATE TABLE made AS SELECT id, name, kind, price * 2 AS doubled, UPPER(name) AS big, at, 7 AS seven, 'lit' AS word, NULL AS nothing FROM src WHERE id < 3
ok 2 (Records: 2  Duplicates: 0  Warnings: 0)
> SHOW CREATE TABLE made
Table	Create Table
made	CREATE TABLE `made` (
  `id` int NOT NULL,
  `name` varchar(20) NOT NULL DEFAULT 'x',
  `kind` enum('a','b') DEFAULT NULL,
  `doubled` decimal(63,2) DEFAULT NULL,
  `big` varchar(255) DEFAULT NULL,
  `at` datetime(3) DEFAULT NULL,
  `seven` bigint NOT NULL,
  `word` varchar(3) NOT NULL,
  `nothing` varchar(0) DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
> SELECT * FROM made ORDER BY id
id	name	kind	doubled	big	at	seven	word	nothing
1	n1	a	3.00	N1	2026-01-02 03:04:05.678000	7	lit	NULL
2	n2	b	40.50	N2	NULL	7	lit	NULL
> CREATE TABLE keyed (id INT PRIMARY KEY, note TEXT) SELECT id, name FROM src
ok 3 (Records: 3  Duplicates: 0  Warnings: 0)
> SHOW CREATE TABLE keyed
Table	Create Table
keyed	CREATE TABLE `keyed` (
  `id` int NOT NULL,
  `note` text DEFAULT NULL,
  `name` varchar(20) NOT NULL DEFAULT 'x',
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
> SELECT * FROM keyed ORDER BY id
id	note	name
1	NULL	n1
2	NULL	n2
3	NULL	n3
> CREATE TABLE counts SELECT kind, COUNT(*) AS n, SUM(price) AS total FROM src GROUP BY kind
ok 3 (Records: 3  Duplicates: 0  Warnings: 0)
> SELECT * FROM counts ORDER BY kind
kind	n	total
NULL	1	NULL
a	1	1.50
b	1	20.25
> DESCRIBE counts
Field	Type	Null	Key	Default	Extra
kind	enum('a','b')	YES		NULL	
n	bigint	NO		NULL	
total	decimal(63,2)	YES		NULL	
# A failed fill leaves no table: two rows give the primary key the same value.
> CREATE TABLE dup (k INT PRIMARY KEY) SELECT 1 AS k UNION ALL SELECT 1
error 1062 (23000): Duplicate entry '1' for key 'dup.PRIMARY'
> SHOW TABLES LIKE 'dup'
Tables_in_ctas (dup)
> CREATE TABLE twice SELECT 1 AS a, 2 AS a
error 1060 (42S21): Duplicate column name 'a'
> CREATE TABLE made SELECT 1 AS a
error 1050 (42S01): Table 'made' already exists
> CREATE TABLE IF NOT EXISTS made SELECT 1 AS a
ok 0 (Records: 0  Duplicates: 0  Warnings: 0)
> SELECT COUNT(*) FROM made
COUNT(*)
2
# A DECIMAL wider than 28 digits holds what Strata's decimals hold (this used to panic).
> CREATE TABLE wide (d DECIMAL(40, 2))
ok 0
> INSERT INTO wide VALUES (12345678901234567890.5), (-1)
ok 2
> SELECT d FROM wide ORDER BY d
d
-1.00
12345678901234567890.50
