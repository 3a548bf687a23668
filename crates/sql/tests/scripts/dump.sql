# What mysqldump and mariadb-dump send besides tables and rows: session settings they save
# and restore, DISABLE/ENABLE KEYS around the rows, and information_schema tables with no
# rows here (files, triggers, routines) or one per table (partitions).
> CREATE DATABASE dmp
ok 1
> USE dmp
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10))
ok 0
> SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0
ok 0
> SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0
ok 0
> SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0
ok 0
> SET SQL_QUOTE_SHOW_CREATE=1
ok 0
> SELECT @@unique_checks, @@foreign_key_checks, @@sql_notes, @OLD_UNIQUE_CHECKS
@@unique_checks	@@foreign_key_checks	@@sql_notes	@OLD_UNIQUE_CHECKS
0	0	0	1
> ALTER TABLE t DISABLE KEYS
ok 0
> INSERT INTO t VALUES (1, 'a'), (2, 'b')
ok 2
> ALTER TABLE t ENABLE KEYS
ok 0
> ALTER TABLE missing DISABLE KEYS
error 1146 (42S02): Table 'dmp.missing' doesn't exist
> SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS, FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS, SQL_NOTES=@OLD_SQL_NOTES
ok 0
> SELECT @@unique_checks, @@foreign_key_checks, @@sql_notes
@@unique_checks	@@foreign_key_checks	@@sql_notes
1	1	1
> SET unique_checks = 'maybe'
error 1231 (42000): Variable 'unique_checks' can't be set to the value of 'maybe'
> SELECT LOGFILE_GROUP_NAME, FILE_NAME, TOTAL_EXTENTS, INITIAL_SIZE, ENGINE, EXTRA FROM INFORMATION_SCHEMA.FILES WHERE FILE_TYPE = 'UNDO LOG' AND FILE_NAME IS NOT NULL AND LOGFILE_GROUP_NAME IS NOT NULL AND LOGFILE_GROUP_NAME IN (SELECT DISTINCT LOGFILE_GROUP_NAME FROM INFORMATION_SCHEMA.FILES WHERE FILE_TYPE = 'DATAFILE' AND TABLESPACE_NAME IN (SELECT DISTINCT TABLESPACE_NAME FROM INFORMATION_SCHEMA.PARTITIONS WHERE TABLE_SCHEMA IN ('dmp'))) GROUP BY LOGFILE_GROUP_NAME, FILE_NAME, ENGINE, TOTAL_EXTENTS, INITIAL_SIZE ORDER BY LOGFILE_GROUP_NAME
LOGFILE_GROUP_NAME	FILE_NAME	TOTAL_EXTENTS	INITIAL_SIZE	ENGINE	EXTRA
> SELECT TABLE_NAME, PARTITION_NAME, PARTITION_METHOD FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'dmp'
TABLE_NAME	PARTITION_NAME	PARTITION_METHOD
t	NULL	NULL
> SELECT TRIGGER_NAME FROM INFORMATION_SCHEMA.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 't'
TRIGGER_NAME
> SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'dmp'
COUNT(*)
0
> select column_name, extra, generation_expression, data_type from information_schema.columns where table_schema=database() and table_name='t' order by ordinal_position
column_name	extra	generation_expression	data_type
id			int
name			varchar
> SELECT COLUMN_NAME, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, DATETIME_PRECISION, PRIVILEGES FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dmp' ORDER BY ORDINAL_POSITION
COLUMN_NAME	CHARACTER_MAXIMUM_LENGTH	CHARACTER_OCTET_LENGTH	NUMERIC_PRECISION	DATETIME_PRECISION	PRIVILEGES
id	NULL	NULL	10	NULL	select,insert,update,references
name	10	40	NULL	NULL	select,insert,update,references
# Maintenance statements scripts send: DO evaluates for effects only; OPTIMIZE TABLE
# analyzes, having nothing to rebuild.
> DO @done := 1, 2 + 2
ok 0
> SELECT @done
@done
1
> DO nope()
error 1305 (42000): FUNCTION NOPE does not exist
> DO
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1
> OPTIMIZE TABLE t
Table	Op	Msg_type	Msg_text
dmp.t	optimize	note	Table does not support optimize, doing analyze instead
dmp.t	optimize	status	OK
> OPTIMIZE NO_WRITE_TO_BINLOG TABLE t
Table	Op	Msg_type	Msg_text
dmp.t	optimize	note	Table does not support optimize, doing analyze instead
dmp.t	optimize	status	OK
> OPTIMIZE TABLE missing
Table	Op	Msg_type	Msg_text
dmp.missing	optimize	Error	Table 'dmp.missing' doesn't exist
dmp.missing	optimize	status	Operation failed
> ANALYZE LOCAL TABLE t
Table	Op	Msg_type	Msg_text
dmp.t	analyze	status	OK
> ANALYZE NO_WRITE_TO_BINLOG t
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 't' at line 1
# A dump's CREATE DATABASE names its character set; the names are checked as MySQL checks
# them, and every database holds utf8mb4 whatever it names.
> CREATE DATABASE dmp2 /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */
ok 1
> CREATE SCHEMA IF NOT EXISTS dmp2 CHARSET = latin1 ENCRYPTION = 'N'
ok 0
> CREATE DATABASE dmp3 CHARACTER SET klingon
error 1115 (42000): Unknown character set: 'klingon'
> CREATE DATABASE dmp3 COLLATE latin1_swedish_ci CHARACTER SET utf8mb4
error 1253 (42000): COLLATION 'latin1_swedish_ci' is not valid for CHARACTER SET 'utf8mb4'
> CREATE DATABASE dmp3 COLLATE nonsense
error 1273 (HY000): Unknown collation: 'nonsense'
> ALTER DATABASE dmp2 DEFAULT CHARACTER SET utf8mb4
ok 1
> ALTER SCHEMA CHARSET utf8mb4
ok 1
> ALTER DATABASE missing CHARSET utf8mb4
error 1049 (42000): Unknown database 'missing'
> ALTER DATABASE dmp2
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1
> SHOW CREATE DATABASE dmp2
Database	Create Database
dmp2	CREATE DATABASE `dmp2` /*!40100 DEFAULT CHARACTER SET utf8mb4 */
> DROP DATABASE dmp2
ok 0
# Objects Strata has none of are listed as none; a binary log is not kept.
> SHOW TRIGGERS
Trigger	Event	Table	Statement	Timing	Created	sql_mode	Definer	character_set_client	collation_connection	Database Collation
> SHOW TRIGGERS FROM dmp LIKE 't%'
Trigger	Event	Table	Statement	Timing	Created	sql_mode	Definer	character_set_client	collation_connection	Database Collation
> SHOW EVENTS FROM missing
error 1049 (42000): Unknown database 'missing'
> SHOW FUNCTION STATUS WHERE Db = 'dmp'
Db	Name	Type	Definer	Modified	Created	Security_type	Comment	character_set_client	collation_connection	Database Collation
> SHOW PROCEDURE STATUS LIKE 'p'
Db	Name	Type	Definer	Modified	Created	Security_type	Comment	character_set_client	collation_connection	Database Collation
> SHOW MASTER STATUS
File	Position	Binlog_Do_DB	Binlog_Ignore_DB	Executed_Gtid_Set
> SHOW BINARY LOGS
error 1381 (HY000): You are not using binary logging
# CHECKSUM TABLE: equal contents give equal checksums, in any order; QUICK is NULL, as
# InnoDB gives it, and so is a missing table.
> CREATE TABLE c1 (id INT PRIMARY KEY, v VARCHAR(5), b VARBINARY(4))
ok 0
> CREATE TABLE c2 (id INT PRIMARY KEY, v VARCHAR(5), b VARBINARY(4))
ok 0
> INSERT INTO c1 VALUES (1, 'a', X'00FF'), (2, NULL, NULL), (3, '', '')
ok 3
> INSERT INTO c2 VALUES (3, '', ''), (2, NULL, NULL), (1, 'a', X'00FF')
ok 3
> CHECKSUM TABLE c1, dmp.c2, missing
Table	Checksum
dmp.c1	1426047170
dmp.c2	1426047170
dmp.missing	NULL
> CHECKSUM TABLE c1 QUICK
Table	Checksum
dmp.c1	NULL
> UPDATE c2 SET v = NULL WHERE id = 3
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> CHECKSUM TABLE c1, c2
Table	Checksum
dmp.c1	1426047170
dmp.c2	4004635119
> CREATE VIEW cv AS SELECT id FROM c1
ok 0
> SHOW KEYS FROM cv
Table	Non_unique	Key_name	Seq_in_index	Column_name	Collation	Cardinality	Sub_part	Packed	Null	Index_type	Comment	Index_comment	Visible
# Character set introducers, as PyMySQL sends bytes.
> SELECT _binary'ab', HEX(_binary X'00FF'), _utf8mb4'é', _latin1'x' = 'x'
ab	HEX(_binary X'00FF')	é	_latin1'x' = 'x'
ab	00FF	é	1
> SELECT _klingon'x'
error 1054 (42S22): Unknown column '_klingon' in 'field list'
> DROP DATABASE dmp
ok 0
