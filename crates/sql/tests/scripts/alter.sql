# ALTER TABLE: columns added, dropped, changed and renamed; indexes added, dropped and
# renamed; the table renamed, commented, its AUTO_INCREMENT moved. Rows stored before a column
# was added read its default (or the value MySQL makes up for NOT NULL).
> CREATE DATABASE alt
ok 1
> USE alt
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10), c INT)
ok 0
> INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20), (3, NULL, 30)
ok 3
> ALTER TABLE t ADD COLUMN d INT NOT NULL DEFAULT 7 AFTER b, ADD e VARCHAR(5) FIRST, ADD f DATETIME NULL, ADD COLUMN (g INT NOT NULL, h TEXT NOT NULL, i ENUM('p', 'q') NOT NULL)
ok 0
> SELECT * FROM t ORDER BY id
e	id	b	d	c	f	g	h	i
NULL	1	x	7	10	NULL	0		p
NULL	2	y	7	20	NULL	0		p
NULL	3	NULL	7	30	NULL	0		p
> INSERT INTO t (id, b, c, g, h) VALUES (4, 'z', 40, 1, 'hh')
error 1364 (HY000): Field 'i' doesn't have a default value
> INSERT INTO t VALUES ('e5', 5, 'w', 8, 50, NULL, 2, 'h5', 'q')
ok 1
> SELECT id, d, g, h, i, d + g FROM t WHERE d = 7 ORDER BY id
id	d	g	h	i	d + g
1	7	0		p	7
2	7	0		p	7
3	7	0		p	7
> SELECT COUNT(*) FROM t WHERE h = '' AND i = 'p'
COUNT(*)
3
# A column added NOT NULL with no value to make up (a date) needs an empty table.
> ALTER TABLE t ADD dd DATE NOT NULL
error 1292 (22007): Incorrect date value: '0000-00-00' for column 'dd' at row 1
> ALTER TABLE t ADD dd DATE NOT NULL DEFAULT '2000-01-01'
ok 0
> SELECT id, dd FROM t WHERE id < 3 ORDER BY id
id	dd
1	2000-01-01
2	2000-01-01
> CREATE TABLE empty (id INT PRIMARY KEY)
ok 0
> ALTER TABLE empty ADD d DATE NOT NULL
ok 0
> SHOW CREATE TABLE empty
Table	Create Table
empty	CREATE TABLE `empty` (
  `id` int NOT NULL,
  `d` date NOT NULL,
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
> ALTER TABLE t ADD COLUMN d INT
error 1060 (42S21): Duplicate column name 'd'
> ALTER TABLE t ADD COLUMN IF NOT EXISTS d INT
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'EXISTS d INT' at line 1
> ALTER TABLE t ADD x INT AFTER nothing
error 1054 (42S22): Unknown column 'nothing' in 't'
> ALTER TABLE t ADD id2 INT PRIMARY KEY
error 1235 (42000): This version of Strata doesn't yet support 'adding a PRIMARY KEY column'
> ALTER TABLE t ADD n INT AUTO_INCREMENT
error 1235 (42000): This version of Strata doesn't yet support 'adding an AUTO_INCREMENT column'
# DROP: the column's values go, its single-column indexes with it.
> ALTER TABLE t ADD INDEX fi (f), DROP COLUMN e, DROP f, DROP COLUMN g, DROP h, DROP i, DROP dd
ok 0
> SELECT * FROM t ORDER BY id
id	b	d	c
1	x	7	10
2	y	7	20
3	NULL	7	30
5	w	8	50
> SHOW INDEX FROM t
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
t	0	PRIMARY	1	id	A	0	NULL	NULL		BTREE			YES
> ALTER TABLE t DROP COLUMN nothing
error 1091 (42000): Can't DROP 'nothing'; check that column/key exists
> ALTER TABLE t DROP COLUMN IF EXISTS nothing
ok 0
> ALTER TABLE t DROP id
error 1235 (42000): This version of Strata doesn't yet support 'dropping a PRIMARY KEY column'
> CREATE TABLE one (a INT)
ok 0
> ALTER TABLE one DROP a
error 1090 (42000): You can't delete all columns with ALTER TABLE; use DROP TABLE instead
> CREATE TABLE pair (a INT, b INT, c INT, KEY ab (a, b))
ok 0
> ALTER TABLE pair DROP b
error 1235 (42000): This version of Strata doesn't yet support 'dropping a column of a multi-column index'
# MODIFY and CHANGE: a wider type at once; a narrower one, or NOT NULL, only if every stored
# value meets it; a type that stores values another way is refused.
> ALTER TABLE t MODIFY b VARCHAR(20) NOT NULL
error 1138 (22004): Invalid use of NULL value
> UPDATE t SET b = '' WHERE b IS NULL
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> ALTER TABLE t MODIFY b VARCHAR(20) NOT NULL
ok 0
> INSERT INTO t (id, b, c) VALUES (6, NULL, 60)
error 1048 (23000): Column 'b' cannot be null
> UPDATE t SET b = 'long' WHERE id = 5
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> ALTER TABLE t MODIFY b VARCHAR(1) NOT NULL
error 1265 (01000): Data truncated for column 'b' at row 4
> ALTER TABLE t MODIFY b CHAR(4)
ok 0
> ALTER TABLE t CHANGE c cc BIGINT NOT NULL DEFAULT 0 FIRST
ok 0
> ALTER TABLE t MODIFY cc TINYINT
ok 0
> UPDATE t SET cc = -1 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> ALTER TABLE t MODIFY cc SMALLINT UNSIGNED
error 1264 (22003): Out of range value for column 'cc' at row 1
> UPDATE t SET cc = 10 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> ALTER TABLE t MODIFY cc SMALLINT UNSIGNED
ok 0
> UPDATE t SET cc = -1 WHERE id = 1
error 1264 (22003): Out of range value for column 'cc' at row 1
> ALTER TABLE t MODIFY cc VARCHAR(10)
error 1235 (42000): This version of Strata doesn't yet support 'changing column 'cc' from smallint unsigned to varchar(10), which stores its values differently'
> ALTER TABLE t MODIFY nothing INT
error 1054 (42S22): Unknown column 'nothing' in 't'
> ALTER TABLE t CHANGE cc d INT
error 1060 (42S21): Duplicate column name 'd'
> DESCRIBE t
Field	Type	Null	Key	Default	Extra
cc	smallint unsigned	YES		NULL	
id	int	NO	PRI	NULL	
b	char(4)	YES		NULL	
d	int	NO		7	
> SELECT * FROM t ORDER BY id
cc	id	b	d
10	1	x	7
20	2	y	7
30	3		7
50	5	long	8
# RENAME COLUMN, ALTER COLUMN … SET / DROP DEFAULT.
> ALTER TABLE t RENAME COLUMN cc TO c, ALTER COLUMN d SET DEFAULT 9
ok 0
> ALTER TABLE t ALTER COLUMN d DROP DEFAULT
ok 0
> INSERT INTO t (id, b, c) VALUES (7, 'v', 70)
error 1364 (HY000): Field 'd' doesn't have a default value
> ALTER TABLE t ALTER d SET DEFAULT 11
ok 0
> INSERT INTO t (id, b, c) VALUES (7, 'v', 70)
ok 1
> SELECT c, id, b, d FROM t WHERE id = 7
c	id	b	d
70	7	v	11
> ALTER TABLE t RENAME COLUMN c TO b
error 1060 (42S21): Duplicate column name 'b'
# Indexes.
> ALTER TABLE t ADD INDEX ib (b), ADD UNIQUE KEY uc (c), ADD KEY (d, c)
ok 0
> SHOW INDEX FROM t
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
t	0	PRIMARY	1	id	A	0	NULL	NULL		BTREE			YES
t	1	ib	1	b	A	0	NULL	NULL	YES	BTREE			YES
t	0	uc	1	c	A	0	NULL	NULL	YES	BTREE			YES
t	1	d	1	d	A	0	NULL	NULL		BTREE			YES
t	1	d	2	c	A	0	NULL	NULL	YES	BTREE			YES
> EXPLAIN SELECT id FROM t WHERE c = 30
id	estRows	task	access object	operator info
Projection	1.00	root		t.id
└─IndexLookUp	1.00	cop[tikv]	table:t, index:uc	eq(t.c, 30)
> SELECT id FROM t WHERE c = 30
id
3
> ALTER TABLE t ADD UNIQUE (d)
error 1062 (23000): Duplicate entry '7' for key 't.d_2'
> ALTER TABLE t ADD INDEX ib (c)
error 1061 (42000): Duplicate key name 'ib'
> ALTER TABLE t RENAME INDEX ib TO ib2, DROP KEY uc, DROP INDEX d
ok 0
> ALTER TABLE t RENAME KEY nothing TO x
error 1176 (42000): Key 'nothing' doesn't exist in table 't'
> ALTER TABLE t DROP INDEX nothing
error 1091 (42000): Can't DROP 'nothing'; check that column/key exists
> ALTER TABLE t ADD PRIMARY KEY (d)
error 1068 (42000): Multiple primary key defined
> ALTER TABLE t DROP PRIMARY KEY
error 1235 (42000): This version of Strata doesn't yet support 'dropping a primary key'
# A column and an index on it in one statement: the index holds the stored rows' default.
> ALTER TABLE t ADD z INT NOT NULL DEFAULT 3, ADD INDEX iz (z)
ok 0
> EXPLAIN SELECT id FROM t WHERE z = 3
id	estRows	task	access object	operator info
Projection	1000.00	root		t.id
└─IndexLookUp	1000.00	cop[tikv]	table:t, index:iz	eq(t.z, 3)
> SELECT id FROM t WHERE z = 3 ORDER BY id
id
1
2
3
5
7
> ALTER TABLE t DROP z
ok 0
# Table options, renames.
> ALTER TABLE t ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='hello', ALGORITHM=INPLACE, LOCK=NONE
ok 0
> ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
ok 0
> SHOW CREATE TABLE t
Table	Create Table
t	CREATE TABLE `t` (
  `c` smallint unsigned DEFAULT NULL,
  `id` int NOT NULL,
  `b` char(4) DEFAULT NULL,
  `d` int NOT NULL DEFAULT '11',
  PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */,
  KEY `ib2` (`b`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='hello'
> CREATE TABLE commented (id INT) COMMENT 'made'
ok 0
> SHOW CREATE TABLE commented
Table	Create Table
commented	CREATE TABLE `commented` (
  `id` int DEFAULT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='made'
> CREATE TABLE seq (id INT AUTO_INCREMENT PRIMARY KEY, v INT)
ok 0
> INSERT INTO seq (v) VALUES (1)
ok 1 last_insert_id=1
> ALTER TABLE seq AUTO_INCREMENT = 100
ok 0
> INSERT INTO seq (v) VALUES (2)
ok 1 last_insert_id=100
> SELECT * FROM seq ORDER BY id
id	v
1	1
100	2
> ALTER TABLE t RENAME TO t2
ok 0
> SELECT COUNT(*) FROM t
error 1146 (42S02): Table 'alt.t' doesn't exist
> ALTER TABLE t2 RENAME AS seq
error 1050 (42S01): Table 'seq' already exists
> RENAME TABLE t2 TO t3, seq TO seq2
ok 0
> SHOW TABLES
Tables_in_alt
commented
empty
one
pair
seq2
t3
> CREATE DATABASE other
ok 1
> ALTER TABLE t3 RENAME other.moved
ok 0
> SELECT COUNT(*) FROM other.moved
COUNT(*)
5
> ALTER TABLE nothing ADD x INT
error 1146 (42S02): Table 'alt.nothing' doesn't exist
> ALTER TABLE other.moved ADD x INT, ORDER BY id
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'ORDER BY id' at line 1
> ALTER TABLE other.moved
ok 0
