#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "pm.h"
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
double gauss(void){double u=(rand()+1.0)/(RAND_MAX+2.0), v=(rand()+1.0)/(RAND_MAX+2.0); return sqrt(-2*log(u))*cos(6.283185307*v);}
int main(int argc,char**argv){
  int m=25000,n=1000; double scale = argc>1?atof(argv[1]):1e-4;
  double*X=malloc(sizeof(double)*m*n); for(long i=0;i<(long)m*n;i++)X[i]=gauss();
  double*st=malloc(sizeof(double)*m); for(int i=0;i<m;i++) st[i]=scale*gauss();
  double th[1000],nu[1000],de[1000];
  for(int rep=0;rep<3;rep++){
    for(int i=0;i<n;i++){th[i]=0;nu[i]=de[i]=1;}
    double t0=now(), acc=0;
    for(int t=0;t<m-1;t++) acc+=ga_axpy_dot(th,st[t]*1e-3,X+(long)t*n,X+(long)(t+1)*n,n);
    double t1=now();
    double sums[2]={0,4}; 
    for(int t=0;t<m-1;t++) acc+=ga_scale_pm_dot(th,nu,de,st[t],X+(long)t*n,X+(long)(t+1)*n,n,sums);
    double t2=now();
    printf("GD %.2f ms  EG %.2f ms ratio %.3f (%g)\n",(t1-t0)*1e3,(t2-t1)*1e3,(t2-t1)/(t1-t0),acc);
  }
}
