# `@name := value` in a query sets a user variable as the query runs and gives the value:
# row by row, in the order rows are read (MySQL leaves that order unspecified when the query
# sorts).
> SELECT @x := 5, @x
@x := 5	@x
5	5
> SELECT @x, @x := @x + 1, @x
@x	@x := @x + 1	@x
5	6	6
> CREATE DATABASE av
ok 1
> USE av
ok 0
> CREATE TABLE t (id INT PRIMARY KEY, v INT)
ok 0
> INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)
ok 3
> SET @total := 0
ok 0
> SELECT id, @total := @total + v AS running FROM t
id	running
1	10
2	30
3	60
> SELECT @total
@total
60
> SELECT @m := MAX(v) FROM t
@m := MAX(v)
30
> SELECT id FROM t WHERE v = @m
id
3
> SET @rn = 0
ok 0
> SELECT @rn := @rn + 1 AS rn, v FROM t WHERE id > 1
rn	v
1	20
2	30
> SELECT @rn
@rn
2
> SELECT @s := CONCAT('v', v) FROM t WHERE id = 2
@s := CONCAT('v', v)
v20
> SELECT @s, @S
@s	@S
v20	v20
> UPDATE t SET v = (@old := v) + 1 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT @old, v FROM t WHERE id = 1
@old	v
10	11
> SELECT 1 := 2
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near ':='
> SELECT @@autocommit := 1
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: near ':='
> DROP DATABASE av
ok 0
