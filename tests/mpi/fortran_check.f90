! fortran_check - MPI_Allreduce (also with MPI_IN_PLACE), MPI_Reduce to root 0
! and MPI_Allgather through the legacy Fortran bindings (the mpi_allreduce_
! family of entry points, shared by "use mpi" and mpif.h), on integer and
! double precision arrays whose results have a closed form.
!
! "use mpi" rather than "include 'mpif.h'": both call the same entry points,
! but with mpif.h gfortran >= 10 rejects calling one routine with integer and
! double precision buffers unless -fallow-argument-mismatch is given.
!
! Every collective is called from its own call site (one CALL statement in
! its own subroutine) a fixed number of times:
!   site                     collective      calls
!   fmpi_allreduce_int        MPI_Allreduce   10
!   fmpi_allreduce_dbl_inpl   MPI_Allreduce    5   (MPI_IN_PLACE)
!   fmpi_reduce_int           MPI_Reduce       7
!   fmpi_reduce_dbl           MPI_Reduce       3
!   fmpi_allgather_int        MPI_Allgather    4
!   fmpi_allgather_dbl        MPI_Allgather    2
! Rank 0 prints one "EXPECT" line per site (with the line of its CALL
! statement, which carries a "! site:" comment) and finally "OK". Any wrong
! value stops the program through MPI_Abort with error code 1.

program fortran_check
  use mpi
  implicit none
  integer, parameter :: n = 37
  integer :: ierr, rank, nprocs, it

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  do it = 1, 10
    call fmpi_allreduce_int(it)
  end do
  do it = 1, 5
    call fmpi_allreduce_dbl_inpl(it)
  end do
  do it = 1, 7
    call fmpi_reduce_int(it)
  end do
  do it = 1, 3
    call fmpi_reduce_dbl(it)
  end do
  do it = 1, 4
    call fmpi_allgather_int(it)
  end do
  do it = 1, 2
    call fmpi_allgather_dbl(it)
  end do

  ! Every rank has checked its results before rank 0 reports success.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(a)') 'EXPECT site=fmpi_allreduce_int file=fortran_check.f90 line=87 collective=MPI_Allreduce calls=10'
    write (*, '(a)') 'EXPECT site=fmpi_allreduce_dbl_inpl file=fortran_check.f90 line=102 collective=MPI_Allreduce calls=5'
    write (*, '(a)') 'EXPECT site=fmpi_reduce_int file=fortran_check.f90 line=116 collective=MPI_Reduce calls=7'
    write (*, '(a)') 'EXPECT site=fmpi_reduce_dbl file=fortran_check.f90 line=136 collective=MPI_Reduce calls=3'
    write (*, '(a)') 'EXPECT site=fmpi_allgather_int file=fortran_check.f90 line=154 collective=MPI_Allgather calls=4'
    write (*, '(a)') 'EXPECT site=fmpi_allgather_dbl file=fortran_check.f90 line=174 collective=MPI_Allgather calls=2'
    write (*, '(a)') 'EXPECT total collective=MPI_Allreduce calls=15'
    write (*, '(a)') 'EXPECT total collective=MPI_Reduce calls=10'
    write (*, '(a)') 'EXPECT total collective=MPI_Allgather calls=6'
    write (*, '(a)') 'OK'
  end if
  call MPI_Finalize(ierr)

contains

  subroutine fail(what, it, i)
    character(len=*), intent(in) :: what
    integer, intent(in) :: it, i
    integer :: ierr2
    write (*, '(a,a,a,i0,a,i0,a,i0)') 'fortran_check: FAIL ', what, ' rank ', rank, ' iteration ', it, ' index ', i
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    stop 1
  end subroutine fail

  ! Sum over ranks r of (r + i + it) = P (i + it) + P (P - 1) / 2.
  subroutine fmpi_allreduce_int(it)
    integer, intent(in) :: it
    integer :: a(n), b(n), i
    do i = 1, n
      a(i) = rank + i + it
    end do
    b = -1
    call MPI_Allreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)  ! site: fmpi_allreduce_int
    do i = 1, n
      if (a(i) /= rank + i + it) call fail('allreduce integer: send buffer modified', it, i)
      if (b(i) /= nprocs * (i + it) + nprocs * (nprocs - 1) / 2) call fail('allreduce integer sum', it, i)
    end do
  end subroutine fmpi_allreduce_int

  ! Maximum over ranks r of (r / 2 + i + it), in place.
  subroutine fmpi_allreduce_dbl_inpl(it)
    integer, intent(in) :: it
    double precision :: x(n)
    integer :: i
    do i = 1, n
      x(i) = 0.5d0 * rank + i + it
    end do
    call MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)  ! site: fmpi_allreduce_dbl_inpl
    do i = 1, n
      if (x(i) /= 0.5d0 * (nprocs - 1) + i + it) call fail('allreduce in place double max', it, i)
    end do
  end subroutine fmpi_allreduce_dbl_inpl

  ! Sum over ranks r of (r + 1) i it = i it P (P + 1) / 2, at root 0.
  subroutine fmpi_reduce_int(it)
    integer, intent(in) :: it
    integer :: a(n), b(n), i
    do i = 1, n
      a(i) = (rank + 1) * i * it
    end do
    b = -1
    call MPI_Reduce(a, b, n, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)  ! site: fmpi_reduce_int
    do i = 1, n
      if (a(i) /= (rank + 1) * i * it) call fail('reduce integer: send buffer modified', it, i)
      if (rank == 0) then
        if (b(i) /= i * it * nprocs * (nprocs + 1) / 2) call fail('reduce integer sum', it, i)
      else
        if (b(i) /= -1) call fail('reduce integer: receive buffer of a non-root rank written', it, i)
      end if
    end do
  end subroutine fmpi_reduce_int

  ! Sum over ranks r of ((r + 1) / 4 + i + it) = P (P + 1) / 8 + P (i + it), at root 0.
  subroutine fmpi_reduce_dbl(it)
    integer, intent(in) :: it
    double precision :: x(n), y(n)
    integer :: i
    do i = 1, n
      x(i) = 0.25d0 * (rank + 1) + i + it
    end do
    y = -1.0d0
    call MPI_Reduce(x, y, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)  ! site: fmpi_reduce_dbl
    do i = 1, n
      if (rank == 0) then
        if (y(i) /= 0.125d0 * nprocs * (nprocs + 1) + nprocs * (i + it)) call fail('reduce double sum', it, i)
      end if
    end do
  end subroutine fmpi_reduce_dbl

  ! Block r of the result holds 1000 r + i + it.
  subroutine fmpi_allgather_int(it)
    integer, intent(in) :: it
    integer :: a(n), i, r
    integer, allocatable :: b(:)
    allocate (b(n * nprocs))
    do i = 1, n
      a(i) = 1000 * rank + i + it
    end do
    b = -1
    call MPI_Allgather(a, n, MPI_INTEGER, b, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)  ! site: fmpi_allgather_int
    do r = 0, nprocs - 1
      do i = 1, n
        if (b(r * n + i) /= 1000 * r + i + it) call fail('allgather integer', it, r * n + i)
      end do
    end do
    deallocate (b)
  end subroutine fmpi_allgather_int

  ! Block r of the result holds r + i / 2 + it.
  subroutine fmpi_allgather_dbl(it)
    integer, intent(in) :: it
    double precision :: x(n)
    double precision, allocatable :: y(:)
    integer :: i, r
    allocate (y(n * nprocs))
    do i = 1, n
      x(i) = rank + 0.5d0 * i + it
    end do
    y = -1.0d0
    call MPI_Allgather(x, n, MPI_DOUBLE_PRECISION, y, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)  ! site: fmpi_allgather_dbl
    do r = 0, nprocs - 1
      do i = 1, n
        if (y(r * n + i) /= r + 0.5d0 * i + it) call fail('allgather double', it, r * n + i)
      end do
    end do
    deallocate (y)
  end subroutine fmpi_allgather_dbl

end program fortran_check
