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
> DROP DATABASE dmp
ok 0
