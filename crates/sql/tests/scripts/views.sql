# Views: a stored SELECT read like a table, with the columns fixed at creation; views share
# the tables' namespace; writes through a view over one table write that table.
> CREATE DATABASE vw
ok 1
> USE vw
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))
ok 0
> INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'x')
ok 3
> CREATE VIEW v AS SELECT id, a * 2 AS doubled, b FROM t WHERE a > 10
ok 0
> SELECT * FROM v ORDER BY id
id	doubled	b
2	40	y
3	60	x
> SELECT doubled FROM v WHERE b = 'x'
doubled
60
> SELECT v.id, t.a FROM v JOIN t ON t.id = v.id ORDER BY v.id
id	a
2	20
3	30
> SELECT b, COUNT(*), SUM(doubled) FROM v GROUP BY b ORDER BY b
b	COUNT(*)	SUM(doubled)
x	1	60
y	1	40
> SELECT x.id FROM v AS x WHERE x.id = 3
id
3
> SELECT * FROM vw.v WHERE id IN (SELECT id FROM v WHERE doubled > 50)
id	doubled	b
3	60	x
> CREATE VIEW named (k, total) AS SELECT b, SUM(a) FROM t GROUP BY b
ok 0
> SELECT * FROM named ORDER BY k
k	total
x	40
y	20
> SELECT total FROM named WHERE k = 'x'
total
40
> CREATE VIEW exprs AS SELECT a+1, UPPER(b) FROM t WHERE id = 1
ok 0
> SELECT * FROM exprs
a+1	UPPER(b)
11	X
> CREATE VIEW onview AS SELECT id FROM v WHERE doubled < 60
ok 0
> SELECT * FROM onview
id
2
> SHOW TABLES
Tables_in_vw
exprs
named
onview
t
v
> SHOW FULL TABLES
Tables_in_vw	Table_type
exprs	VIEW
named	VIEW
onview	VIEW
t	BASE TABLE
v	VIEW
> SHOW CREATE VIEW v
View	Create View	character_set_client	collation_connection
v	CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `v` AS SELECT id, a * 2 AS doubled, b FROM t WHERE a > 10	utf8mb4	utf8mb4_bin
> SHOW CREATE TABLE named
View	Create View	character_set_client	collation_connection
named	CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `named` (`k`,`total`) AS SELECT b, SUM(a) AS `SUM(a)` FROM t GROUP BY b	utf8mb4	utf8mb4_bin
> SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'vw' ORDER BY TABLE_NAME
TABLE_NAME	TABLE_TYPE	ENGINE	TABLE_COMMENT
exprs	VIEW	NULL	VIEW
named	VIEW	NULL	VIEW
onview	VIEW	NULL	VIEW
t	BASE TABLE	InnoDB	
v	VIEW	NULL	VIEW
> SELECT TABLE_NAME, CHECK_OPTION, IS_UPDATABLE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'vw' ORDER BY TABLE_NAME
TABLE_NAME	CHECK_OPTION	IS_UPDATABLE
exprs	NONE	NO
named	NONE	NO
onview	NONE	NO
v	NONE	NO
# The view's database names its tables, whatever the session's is.
> CREATE DATABASE other
ok 1
> USE other
ok 0
> SELECT COUNT(*) FROM vw.v
COUNT(*)
2
> USE vw
ok 0
# Errors: names taken, column lists, bad definitions.
> CREATE VIEW v AS SELECT 1
error 1050 (42S01): Table 'v' already exists
> CREATE VIEW t AS SELECT 1
error 1050 (42S01): Table 't' already exists
> CREATE TABLE v (x INT)
error 1050 (42S01): Table 'v' already exists
> CREATE VIEW bad AS SELECT nope FROM t
error 1054 (42S22): Unknown column 'nope' in 'field list'
> CREATE VIEW bad AS SELECT * FROM missing
error 1146 (42S02): Table 'vw.missing' doesn't exist
> CREATE VIEW bad (x) AS SELECT id, a FROM t
error 1353 (HY000): In definition of view, derived table or common table expression, SELECT list and column names list have different column counts
> CREATE VIEW bad AS SELECT id, a AS id FROM t
error 1060 (42S21): Duplicate column name 'id'
> CREATE VIEW bad (x, x) AS SELECT id, a FROM t
error 1060 (42S21): Duplicate column name 'x'
> INSERT INTO v VALUES (4, 40, 'z')
error 1471 (HY000): The target table v of the INSERT is not insertable-into
> UPDATE v SET doubled = 1
error 1348 (HY000): Column 'doubled' is not updatable
> DELETE FROM named
error 1288 (HY000): The target table named of the DELETE is not updatable
> DROP TABLE v
error 1051 (42S02): Unknown table 'vw.v'
> DROP VIEW t
error 1347 (HY000): 'vw.t' is not VIEW
> DROP VIEW nothere
error 1051 (42S02): Unknown table 'vw.nothere'
> DROP VIEW IF EXISTS nothere
ok 0
> SHOW CREATE VIEW t
error 1347 (HY000): 'vw.t' is not VIEW
# Replacing and altering.
> CREATE OR REPLACE VIEW v AS SELECT id, b FROM t
ok 0
> SELECT * FROM v ORDER BY id
id	b
1	x
2	y
3	x
> SELECT * FROM onview
error 1356 (HY000): View 'vw.onview' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them
> ALTER VIEW v AS SELECT id, a * 2 AS doubled FROM t WHERE a > 10
ok 0
> SELECT * FROM onview
id
2
> ALTER VIEW nothere AS SELECT 1
error 1146 (42S02): Table 'vw.nothere' doesn't exist
> CREATE VIEW checked AS SELECT id, a FROM t WHERE a < 100 WITH CASCADED CHECK OPTION
ok 0
> SHOW CREATE VIEW checked
View	Create View	character_set_client	collation_connection
checked	CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW `checked` AS SELECT id, a FROM t WHERE a < 100 WITH CASCADED CHECK OPTION	utf8mb4	utf8mb4_bin
> SELECT CHECK_OPTION FROM information_schema.VIEWS WHERE TABLE_NAME = 'checked'
CHECK_OPTION
CASCADED
> CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW dumped AS select `t`.`id` AS `id` from `t`
ok 0
> SELECT * FROM dumped ORDER BY id
id
1
2
3
# DESCRIBE and information_schema.COLUMNS type a view's columns from its SELECT.
> DESCRIBE v
Field	Type	Null	Key	Default	Extra
id	int	NO		NULL	
doubled	bigint	YES		NULL	
> SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'vw' AND TABLE_NAME = 'named' ORDER BY ORDINAL_POSITION
COLUMN_NAME	DATA_TYPE	IS_NULLABLE
k	varchar	YES
total	decimal	YES
# A view over `SELECT *` keeps the columns it had when the table gains one.
> CREATE VIEW everything AS SELECT * FROM t
ok 0
> ALTER TABLE t ADD COLUMN c INT DEFAULT 7
ok 0
> SELECT * FROM everything ORDER BY id
id	a	b
1	10	x
2	20	y
3	30	x
> ALTER TABLE t DROP COLUMN c
ok 0
# A view whose table lost a column it reads is invalid (1356) until the column is back.
> ALTER TABLE t DROP COLUMN b
ok 0
> SELECT * FROM named
error 1356 (HY000): View 'vw.named' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them
> ALTER TABLE t ADD COLUMN b VARCHAR(10) DEFAULT 'x'
ok 0
> SELECT * FROM named
k	total
x	60
> RENAME TABLE dumped TO renamed
ok 0
> SELECT COUNT(*) FROM renamed
COUNT(*)
3
> DROP VIEW exprs, onview
ok 0
> SHOW TABLES
Tables_in_vw
checked
everything
named
renamed
t
v
> DROP DATABASE vw
ok 0
> CREATE DATABASE vw
ok 1
> SHOW TABLES FROM vw
Tables_in_vw
> DROP DATABASE vw
ok 0
> DROP DATABASE other
ok 0
# SHOW TABLE STATUS lists tables and views, as GUI clients read them.
> CREATE DATABASE st
ok 1
> USE st
ok 0
> CREATE TABLE a (id INT PRIMARY KEY) COMMENT 'first'
ok 0
> CREATE TABLE b (id INT PRIMARY KEY)
ok 0
> CREATE VIEW c AS SELECT id FROM a
ok 0
> SHOW TABLE STATUS
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
a	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		first
b	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		
c	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	VIEW
> SHOW TABLE STATUS LIKE 'a'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
a	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		first
> SHOW TABLE STATUS FROM st WHERE Comment = 'VIEW'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
c	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	VIEW
> SHOW TABLE STATUS IN st LIKE 'b%'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
b	InnoDB	10	Dynamic	0	0	0	0	0	0	NULL	NULL	NULL	NULL	utf8mb4_bin	NULL		
> SHOW TABLE STATUS FROM nowhere
error 1049 (42000): Unknown database 'nowhere'
> SHOW TABLE STATUS FROM st LIKE 'c'
Name	Engine	Version	Row_format	Rows	Avg_row_length	Data_length	Max_data_length	Index_length	Data_free	Auto_increment	Create_time	Update_time	Check_time	Collation	Checksum	Create_options	Comment
c	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	NULL	VIEW
> DROP DATABASE st
ok 0
# Writing through a view over one table writes the table: its WHERE limits the rows, its
# columns name the table's; expression columns cannot be set, grouped views not written.
> CREATE DATABASE vwr
ok 1
> USE vwr
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10))
ok 0
> INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'x')
ok 3
> CREATE VIEW big AS SELECT id, a AS amount, b, a * 2 AS doubled FROM t WHERE a > 10
ok 0
> UPDATE big SET b = 'q' WHERE amount < 30
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT * FROM t ORDER BY id
id	a	b
1	10	x
2	20	q
3	30	x
> UPDATE big SET b = 'all'
ok 2 (Rows matched: 2  Changed: 2  Warnings: 0)
> SELECT * FROM t ORDER BY id
id	a	b
1	10	x
2	20	all
3	30	all
> UPDATE big AS g SET g.amount = g.amount + 1 WHERE g.doubled = 60
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT * FROM t ORDER BY id
id	a	b
1	10	x
2	20	all
3	31	all
> UPDATE big SET doubled = 1
error 1348 (HY000): Column 'doubled' is not updatable
> UPDATE big SET nope = 1
error 1054 (42S22): Unknown column 'nope' in 'field list'
> DELETE FROM big WHERE amount = 31
ok 1
> SELECT * FROM t ORDER BY id
id	a	b
1	10	x
2	20	all
> DELETE FROM big WHERE id = 1
ok 0
> INSERT INTO big VALUES (5, 50, 'e', 100)
error 1471 (HY000): The target table big of the INSERT is not insertable-into
> INSERT INTO big (id, amount, b) VALUES (5, 50, 'e'), (6, 5, 'hidden')
ok 2
> SELECT * FROM t ORDER BY id
id	a	b
1	10	x
2	20	all
5	50	e
6	5	hidden
> SELECT * FROM big ORDER BY id
id	amount	b	doubled
2	20	all	40
5	50	e	100
> INSERT INTO big (id, amount) VALUES (5, 1) ON DUPLICATE KEY UPDATE amount = amount + 100
ok 2
> SELECT * FROM t WHERE id = 5
id	a	b
5	150	e
> CREATE VIEW cols (k, v) AS SELECT id, b FROM t
ok 0
> INSERT INTO cols VALUES (7, 'seven')
ok 1
> REPLACE INTO cols VALUES (7, 'SEVEN')
ok 2
> UPDATE cols SET v = 'sept' WHERE k = 7
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT * FROM t WHERE id = 7
id	a	b
7	NULL	sept
> CREATE VIEW onbig AS SELECT id, amount FROM big WHERE amount > 40
ok 0
> UPDATE onbig SET amount = amount + 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT id, a FROM t ORDER BY id
id	a
1	10
2	20
5	151
6	5
7	NULL
> CREATE VIEW grouped AS SELECT b, COUNT(*) AS n FROM t GROUP BY b
ok 0
> UPDATE grouped SET b = 'z'
error 1288 (HY000): The target table grouped of the UPDATE is not updatable
> DELETE FROM grouped
error 1288 (HY000): The target table grouped of the DELETE is not updatable
> INSERT INTO grouped VALUES ('z', 1)
error 1471 (HY000): The target table grouped of the INSERT is not insertable-into
> CREATE VIEW joined AS SELECT t.id, u.b FROM t JOIN t AS u ON u.id = t.id
ok 0
> DELETE FROM joined
error 1288 (HY000): The target table joined of the DELETE is not updatable
> CREATE VIEW checked AS SELECT id, a FROM t WHERE a < 100 WITH CHECK OPTION
ok 0
> UPDATE checked SET a = 1000
error 1288 (HY000): The target table checked of the UPDATE is not updatable
> DROP DATABASE vwr
ok 0
